# bands.gp: curves with bands, three panels (test accuracy, test loss, throughput), a line
# style per series: eight colours, cycled with a new dash pattern for each further eight, so
# any number of series stay apart; the legend outside, to the right. Computes nothing: each
# series is a CSV that hetsim wrote with the columns x, acc_mean, acc_lo, acc_hi, loss_mean,
# loss_lo, loss_hi, tp_mean, tp_lo, tp_hi (a line at the mean, a band from lo to hi; NaN
# where there is no value).
#   hetsim plot SWEEP_DIR --by KEY   a series per value of KEY: mean and 95% interval of the
#                                    mean over its runs (or min-max, --band minmax)
#   hetsim check                     the golden band and the run (lo = hi = mean)
#
# Variables, set on a first line of input ahead of this script (or with gnuplot -e):
#   ins      space-separated CSV paths, one per series
#   titles   space-separated series labels in the same order (no spaces)
#   heading  the figure's title (no quotes)
#   xlabel   the x axis label
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
# Example:
#   gnuplot -e "ins='a.csv b.csv'; titles='a b'; heading='x'; xlabel='s'; out='o.png'" bands.gp

n = words(ins)

# Taller with many series, so that each panel's legend fits beside it.
height = n > 16 ? 1100 + 3 * 17 * (n - 16) : 1100
# The figure's format: fmt ('png', 'pdf' or 'svg'; hetsim sets it from the file name),
# one terminal per format at the same layout (a PDF at 100 pixels to the inch).
if (!exists("fmt")) fmt = "png"
terminal(w, h, f) = fmt eq "pdf" \
    ? sprintf('set terminal pdfcairo size %gin,%gin font "Sans,%d" noenhanced linewidth 1', \
              w / 100.0, h / 100.0, f) \
    : fmt eq "svg" \
    ? sprintf('set terminal svg size %d,%d font "Sans,%d" noenhanced linewidth 1 background "white"', \
              w, h, f) \
    : sprintf('set terminal pngcairo size %d,%d font "Sans,%d" noenhanced linewidth 1', w, h, f)
eval terminal(1000, height, 11)
set output out
set encoding utf8

set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#D55E00"
set linetype 3 lc rgb "#009E73"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#E69F00"
set linetype 6 lc rgb "#56B4E9"
set linetype 7 lc rgb "#000000"
set linetype 8 lc rgb "#999999"
set linetype cycle 8

set datafile separator ","
set datafile columnheaders
set datafile missing "NaN"
set style fill transparent solid 0.2 noborder
set grid xtics ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 3
set xtics nomirror
set ytics nomirror
set key outside right top vertical Left reverse samplen 4 spacing (n > 12 ? 1.0 : 1.2) width 1
# Series i: colour i (cycled over 8), dash pattern 1 + (i - 1) / 8 (solid, dashed, dotted, ...).
dash(i) = 1 + ((i - 1) / 8) % 5
set xrange [0:*]

set multiplot layout 3,1 title heading font "Sans,14"

set ylabel "test accuracy"
set yrange [0:1]
plot for [i = 1:n] word(ins, i) using "x":"acc_lo":"acc_hi" with filledcurves lt i notitle, \
     for [i = 1:n] word(ins, i) using "x":"acc_mean" with lines lt i lw 2 dt dash(i) title word(titles, i)

set ylabel "test loss"
set yrange [0:*]
plot for [i = 1:n] word(ins, i) using "x":"loss_lo":"loss_hi" with filledcurves lt i notitle, \
     for [i = 1:n] word(ins, i) using "x":"loss_mean" with lines lt i lw 2 dt dash(i) title word(titles, i)

set ylabel "samples / s"
set xlabel xlabel
plot for [i = 1:n] word(ins, i) using "x":"tp_lo":"tp_hi" with filledcurves lt i notitle, \
     for [i = 1:n] word(ins, i) using "x":"tp_mean" with lines lt i lw 2 dt dash(i) title word(titles, i)

unset multiplot
unset output
