# convergence.gp: test accuracy (left axis) and test loss (right axis) against simulated
# time, one colour per run, read from each run's metrics.csv. Computes nothing: every point
# is a (time_s, test_accuracy) or (time_s, test_loss) pair from the file.
#
# Variables, set with gnuplot -e "..." or, as outputs/plot.c does, on a first line of input
# ahead of this script:
#   ins      space-separated metrics.csv paths, one per run
#   titles   space-separated run labels in the same order (no spaces; "_" is shown as is)
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
#   font_pt, title_pt  optional: the text's and the title's size in points (12, 14)
#   has_acc  optional: a 0/1 word per run, 1 if that run recorded test accuracy or loss.
#            A run with 0 is listed in the key as "<label>: no accuracy"; when no run has
#            any (timing-only models), the figure says so instead of failing on empty data.
# Example:
#   gnuplot -e "ins='out/a/metrics.csv'; titles='a'; out='convergence.png'" plots/convergence.gp

if (!exists("has_acc")) has_acc = "1"
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

# Okabe-Ito colours (safe for colour-blind readers and in greyscale print).
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
# A label centred on the canvas rather than a title centred over the (narrower) plot area.
set label 99 "Convergence: " . names at screen 0.5, screen 0.96 center font sprintf("Sans,%d", title_pt)
set tmargin 4

if (strstrt(has_acc, "1") == 0) {
    # Timing-only runs: no accuracy or loss to draw, so say so on an empty frame.
    unset border
    unset tics
    unset key
    set xrange [0:1]
    set yrange [0:1]
    set label 1 "No test accuracy or loss recorded" at graph 0.5, 0.55 center font sprintf("Sans,%d", title_pt + 2)
    set label 2 "(timing-only runs: the scenario's workload.model.name is \"none\")" \
        at graph 0.5, 0.45 center
    plot NaN notitle
    unset output
    exit
}

set xlabel "simulated time (s)"
set ylabel "test accuracy"
set y2label "test loss"
set xrange [0:*]
set yrange [0:1]
set y2range [0:*]
set ytics 0.1 nomirror
set y2tics nomirror
set format y "%.1f"
set grid xtics ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 11
# The key sits outside on the right (inside it could hide a curve); long labels would leave
# no room for the plot there, so they go below it, where gnuplot 5.4 sets the key close
# under the x label when a y2 axis is in use (readable, if tight).
set key outside right top vertical Left reverse samplen 3.5 spacing (n > 12 ? 1.0 : 1.3) width 1
if (below) { set key below center horizontal Left reverse samplen 3.5 spacing 1.1 maxcols 2 width 1 }

# Key: one entry per run in its colour, then what solid and dashed mean. A run without
# accuracy values draws nothing (gnuplot skips a file with no valid points), so its entry is
# a keyentry saying so; `missing` lists those runs' indices.
missing = ""
do for [i = 1:n] { if (word(has_acc, i) eq "0") { missing = missing . " " . i } }
m(j) = j <= words(missing) ? int(word(missing, j)) : 1

# Past eight runs the colours repeat: run i > 8 gets point markers of shape
# 4 + (i - 9) / 8 on both of its lines (the first eight have none).
mark(i) = 4 + ((i - 9) / 8) % 10
msize(i) = i <= 8 ? 0 : 1.1

plot for [i = 1:n] word(ins, i) using "time_s":"test_accuracy" axes x1y1 \
         with linespoints lt i lw 2.5 dt solid pt mark(i) ps msize(i) pi 3 \
         title (n == 1 ? "accuracy (left axis)" : word(titles, i)), \
     for [i = 1:n] word(ins, i) using "time_s":"test_loss" axes x1y2 \
         with linespoints lt i lw 2 dt (10, 6) pt mark(i) ps msize(i) pi 3 notitle, \
     for [j = 1:words(missing)] keyentry with lines lt m(j) lw 2.5 dt solid \
         title word(titles, m(j)) . ": no accuracy", \
     for [k = 1:(n == 1 ? 1 : 0)] keyentry with lines lt 1 lw 2 dt (10, 6) \
         title "loss (right axis)", \
     for [k = 1:(n > 1 ? 1 : 0)] keyentry with lines lc rgb "#000000" lw 2.5 dt solid \
         title "accuracy (left axis)", \
     for [k = 1:(n > 1 ? 1 : 0)] keyentry with lines lc rgb "#000000" lw 2 dt (10, 6) \
         title "loss (right axis)"
unset output
