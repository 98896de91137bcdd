# breakdown.gp: where each worker's simulated time went, as one stacked bar per worker
# (compute, communication, waiting, and down time when a run had failures), read from each
# run's workers.csv. Several runs give one figure with a panel per run, stacked vertically
# (two columns from four runs on), so breakdown.png is always a single file. Computes
# nothing: the segments are the compute_s, comm_s, wait_s and down_s columns as written,
# stacked by gnuplot's rowstacked histogram style. The x axis is the row number, which is
# the worker id because workers.csv lists workers in id order from 0.
#
# Variables, set with gnuplot -e "..." or, as outputs/plot.c does, on a first line of input
# ahead of this script:
#   ins      space-separated workers.csv paths, one per run
#   titles   space-separated run labels in the same order (no spaces; "_" is shown as is)
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
#   font_pt, title_pt  optional: the text's and the title's size in points (12, 14)
#   downs    optional: a 0/1 word per run, 1 if any worker of that run has down_s > 0
#            (only then is a "down" segment drawn and listed); default all 1
#   workers  optional: the number of workers (rows) per run, which fixes the x range to the
#            bars; up to 32 workers every worker gets a tic; default: gnuplot's autoscaling
#   ymax     optional: the longest bar (seconds) over all runs, so that every panel shares
#            one time axis with 5% headroom; default: each panel autoscales
# Example:
#   gnuplot -e "ins='out/a/workers.csv'; titles='a'; out='breakdown.png'" plots/breakdown.gp

n = words(ins)
if (!exists("downs")) { downs = ""; do for [i = 1:n] { downs = downs . " 1" } }
if (!exists("workers")) { workers = "" }

# Layout only: panel grid and a canvas that keeps each panel about 1000 x 300 or larger.
cols = n <= 3 ? 1 : n <= 16 ? 2 : n <= 36 ? 3 : 4
rows = (n + cols - 1) / cols
width = cols == 1 ? 1000 : 800 * cols
height = rows == 1 ? 600 : 80 + 300 * rows

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
eval terminal(width, height, font_pt)
set output out
set encoding utf8

set datafile separator ","
set datafile columnheaders

# Segment columns, their key titles (one word each) and colours (Okabe-Ito).
segs = "compute_s comm_s wait_s down_s"
seg_titles = "compute communication waiting down"
seg_colours = "#0072B2 #E69F00 #BBBBBB #D55E00"
nseg(i) = word(downs, i) eq "1" ? 4 : 3

set style data histograms
set style histogram rowstacked
set xlabel "worker"
set ylabel "simulated time (s)"
if (exists("ymax") && ymax > 0) { set yrange [0:1.05 * ymax] } else { set yrange [0:*] }
set xtics nomirror scale 0.5
set ytics nomirror
set grid ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 3
set key outside right top vertical Left reverse samplen 2 spacing 1.3 width 1 invert

set multiplot layout rows, cols title "Time breakdown per worker" font sprintf("Sans,%d", title_pt)
do for [i = 1:n] {
    set title word(titles, i)
    nw = words(workers) >= i ? int(word(workers, i)) : 0
    # Bars sit at x = 0 .. nw-1: the range ends half a bar beyond each end bar.
    if (nw >= 1) { set xrange [-0.5:nw - 0.5] } else { set xrange [*:*] }
    if (nw >= 1 && nw <= 32) { set xtics 1 } else { set xtics autofreq }
    # Outlined bars with gaps while they are wide enough; edge to edge without outlines
    # beyond 64 workers, where outlines would hide the colours.
    if (nw >= 1 && nw <= 64) {
        set style fill solid 0.9 border rgb "#404040"
        set boxwidth 0.75 relative
    } else {
        set style fill solid 0.9 noborder
        set boxwidth 1 relative
    }
    plot for [k = 1:nseg(i)] word(ins, i) using word(segs, k) \
        lc rgb word(seg_colours, k) title word(seg_titles, k)
}
unset multiplot
unset output
