# bars.gp: one bar per row of a CSV with the columns label, mean, lo, hi (a bar at the
# mean, an error bar from lo to hi; an empty mean draws no bar). Computes nothing:
# `hetsim plot SWEEP_DIR --by KEY` writes the CSV (time to target per value of KEY).
#
# Variables, set on a first line of input ahead of this script (or with gnuplot -e):
#   in       the CSV path
#   heading  the figure's title (no quotes)
#   ylabel   the y axis label
#   out      the PNG to write
# Example:
#   gnuplot -e "in='ttt.csv'; heading='time to target'; ylabel='s'; out='ttt.png'" bars.gp

set terminal pngcairo size 900,600 font "Sans,12" noenhanced linewidth 1
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
set offsets 0.5, 0.5, 0, 0
set title heading font "Sans,14"
set ylabel ylabel
set key off
plot in using 0:"mean":xtic(1) with boxes lc rgb "#0072B2", \
     in using 0:"mean":"lo":"hi" with yerrorbars lc rgb "#000000" pt 0
unset output
