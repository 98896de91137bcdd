# throughput.gp: training throughput (samples per simulated second, all workers together)
# against simulated time, one colour per run, read from each run's metrics.csv. Computes
# nothing: each row's throughput_sps is the rate over the interval that ends at its time_s,
# so it is drawn as a step over that interval (fsteps).
#
# Variables, set with gnuplot -e "..." or, as outputs/plot.c does, on a first line of input
# ahead of this script:
#   ins      space-separated metrics.csv paths, one per run
#   titles   space-separated run labels in the same order (no spaces; "_" is shown as is)
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
#   font_pt, title_pt  optional: the text's and the title's size in points (12, 14)
# Example:
#   gnuplot -e "ins='out/a/metrics.csv'; titles='a'; out='throughput.png'" plots/throughput.gp

n = words(ins)

# Long labels (a sweep point's overrides) put the legend below the plot (two columns if they
# fit); otherwise it is to the right. The canvas grows with the legend.
maxlen = 0
do for [i = 1:n] { if (strlen(word(titles, i)) > maxlen) { maxlen = strlen(word(titles, i)) } }
below = maxlen > 24 ? 1 : 0
height = below ? 480 + 21 * (n + 2) : (n > 24 ? 600 + 17 * (n - 24) : 600)
# The figure's format: fmt ('png', 'pdf' or 'svg'; hetsim sets it from the file name),
# one terminal per format at the same layout (a PDF at 100 pixels to the inch).
if (!exists("fmt")) fmt = "png"
if (!exists("font_pt")) font_pt = 12
if (!exists("title_pt")) title_pt = 14
terminal(w, h, f) = fmt eq "pdf" \
    ? sprintf('set terminal pdfcairo size %gin,%gin font "Sans,%d" noenhanced linewidth 1', \
              w / 100.0, h / 100.0, f) \
    : fmt eq "svg" \
    ? sprintf('set terminal svg size %d,%d font "Sans,%d" noenhanced linewidth 1 background "white"', \
              w, h, f) \
    : sprintf('set terminal pngcairo size %d,%d font "Sans,%d" noenhanced linewidth 1', w, h, f)
eval terminal(1000, height, font_pt)
set output out
set encoding utf8

# Okabe-Ito colours, in the same order as convergence.gp so a run keeps its colour.
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

# The title names the runs while they fit on a line; the key always names them.
names = word(titles, 1)
do for [i = 2:n] { names = names . ", " . word(titles, i) }
if (strlen(names) > 60) { names = sprintf("%d runs", n) }
set label 99 "Throughput: " . names at screen 0.5, screen 0.96 center font sprintf("Sans,%d", title_pt)
set tmargin 4

set xlabel "simulated time (s)"
set ylabel "samples / s"
set xrange [0:*]
set yrange [0:*]
set format y "%.0f"
set ytics nomirror
set xtics nomirror
set grid xtics ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 3
set key outside right top vertical Left reverse samplen 3.5 spacing (n > 12 ? 1.0 : 1.3) width 1
if (below) { set key below center horizontal Left reverse samplen 3.5 spacing 1.1 maxcols 2 width 1 }

# Past eight runs the colours repeat, with a new dash pattern for each further eight.
dash(i) = 1 + ((i - 1) / 8) % 5
plot for [i = 1:n] word(ins, i) using "time_s":"throughput_sps" \
         with fsteps lt i lw 2 dt dash(i) title word(titles, i)
unset output
