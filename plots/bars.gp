# bars.gp: one bar per row of a CSV with the columns label, mean, lo, hi, top, note_top,
# low, note_low (a bar at the mean, an error bar from lo to hi; an empty or NaN mean draws
# no bar; note_top is written above the error bar at height `top`, and note_low rotated
# upwards from height `low`; a NaN height writes no note). Computes nothing: `hetsim plot SWEEP_DIR --by KEY`
# writes the CSV (time to target per value of KEY: mean and 95% interval over the runs that
# reached it, "3/5" above it when not all runs did, "not reached (> T s)" instead of a bar).
#
# Variables, set on a first line of input ahead of this script (or with gnuplot -e):
#   in       the CSV path
#   nbars    optional: the number of rows (a wider figure for many)
#   heading  the figure's title (no quotes)
#   ylabel   the y axis label
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
# Example:
#   gnuplot -e "in='ttt.csv'; heading='time to target'; ylabel='s'; out='ttt.png'" bars.gp

if (!exists("nbars")) nbars = 1
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
eval terminal(nbars > 12 ? 900 + 45 * (nbars - 12) : 900, 600, 12)
set output out
set encoding utf8
set datafile separator ","
set datafile columnheaders
set datafile missing "NaN"
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 3
set xtics nomirror rotate by -30
set ytics nomirror
set yrange [0:*]
set offsets 0.5, 0.5, graph 0.15, 0
set title heading font "Sans,14"
set ylabel ylabel
set key off
plot in using 0:"mean":xtic(1) with boxes lc rgb "#0072B2", \
     in using 0:"mean":"lo":"hi" with yerrorbars lc rgb "#000000" pt 0, \
     in using 0:"top":"note_top" with labels offset 0,0.8 font "Sans,10", \
     in using 0:"low":"note_low" with labels rotate by 90 left offset 0,0.5 font "Sans,10" \
         tc rgb "#D55E00"
unset output
