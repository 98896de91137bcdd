# shares.gp: where the workers' time went, one stacked bar per row of a CSV (a group of runs):
# compute, the computation that communication overlapped, communication, waiting, and down
# time, each a percentage of the workers' time. Computes nothing: `hetsim plot SWEEP_DIR --by
# KEY` writes the CSV (breakdown-by-KEY.csv: label, compute, overlap, comm, wait, down, the
# means over each value's runs of every run's shares, summed over its workers, from
# workers.csv), and this script stacks its columns with gnuplot's rowstacked histograms.
#
# Variables, set on a first line of input ahead of this script (or with gnuplot -e):
#   in       the CSV path
#   nbars    optional: the number of rows (a wider figure for many)
#   overlap  optional: 1 to draw the overlap column (communication that overlapped the
#            workers' own computation, workers.csv's comm_overlap_s), 0 not to; default 1
#   down     optional: 1 to draw the down column (failures), 0 not to; default 1
#   heading  the figure's title (no single quotes); '' draws none
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
#   font_pt, title_pt        optional: the text's and the title's size in points (12, 14)
#   width_in, height_in      optional: a paper figure of that size in inches (pdf: points at
#            that size; png: dpi pixels an inch, text and lines scaled to match); without
#            them, a screen figure (a PDF at 100 pixels to the inch)
#   dpi      optional, paper PNG figures: pixels an inch (default 300)
# Example:
#   gnuplot -e "in='b.csv'; heading='time'; out='b.png'" shares.gp

if (!exists("nbars")) nbars = 1
if (!exists("overlap")) overlap = 1
if (!exists("down")) down = 1
# The figure's format: fmt ('png', 'pdf' or 'svg'; hetsim sets it from the file name).
if (!exists("fmt")) fmt = "png"
if (!exists("font_pt")) font_pt = 12
if (!exists("title_pt")) title_pt = 14
if (!exists("dpi")) dpi = 300
paper = exists("width_in") && exists("height_in")
screen(w, h, f) = fmt eq "pdf" \
    ? sprintf('set terminal pdfcairo size %gin,%gin font "Sans,%g" noenhanced linewidth 1', \
              w / 100.0, h / 100.0, f) \
    : fmt eq "svg" \
    ? sprintf('set terminal svg size %d,%d font "Sans,%g" noenhanced linewidth 1 background "white"', \
              w, h, f) \
    : sprintf('set terminal pngcairo size %d,%d font "Sans,%g" noenhanced linewidth 1', w, h, f)
# Paper figures: text at font_pt points at the figure's own size (cairo draws a font size
# times fontscale times 4/3 in points).
sheet(w, h, f) = fmt eq "pdf" \
    ? sprintf('set terminal pdfcairo size %gin,%gin font "Sans,%g" fontscale 0.75 noenhanced linewidth 1', \
              w, h, f) \
    : fmt eq "svg" \
    ? sprintf('set terminal svg size %d,%d font "Sans,%g" fontscale 1 noenhanced linewidth 1 background "white"', \
              w * 72, h * 72, f) \
    : sprintf('set terminal pngcairo size %d,%d font "Sans,%g" fontscale %g noenhanced linewidth %g', \
              w * dpi, h * dpi, f, 0.75 * dpi / 72.0, dpi / 72.0)
if (paper) { eval sheet(width_in, height_in, font_pt) } else { eval screen(nbars > 10 ? 1000 + 45 * (nbars - 10) : 1000, 600, font_pt) }
set output out
set encoding utf8
set datafile separator ","
set datafile columnheaders
set datafile missing "NaN"
# The first column is a display name, text of the user's: a "#" opening it is no comment.
set datafile commentschars ""

# Segments: the CSV's columns, their legend titles and colours (Okabe-Ito); overlap and down
# are left out when their flag is 0.
cols = "compute overlap comm wait down"
colours = "#0072B2 #56B4E9 #E69F00 #BBBBBB #D55E00"
title_of(k) = k == 1 ? "compute" : k == 2 ? "compute, overlapped by communication" \
    : k == 3 ? "communication" : k == 4 ? "waiting" : "down"
shown(k) = (k == 2 && !overlap) || (k == 5 && !down) ? 0 : 1

set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border rgb "#404040"
set boxwidth 0.7 relative
set grid ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 3
set xtics nomirror rotate by -30
set ytics nomirror
set yrange [0:100]
set xrange [-0.6:nbars - 0.4]
set ylabel (paper ? "share of time (%)" : "share of the workers' time (%)")
if (strlen(heading) > 0) { set title heading font sprintf("Sans,%g", title_pt) }
if (paper) {
    set key below horizontal Left reverse samplen 1.5 spacing 1 width 0 invert maxcols 3
} else {
    set key outside right top vertical Left reverse samplen 2 spacing 1.3 width 1 invert
}
set lmargin 10

plot for [k = 1:5] in using (shown(k) ? column(word(cols, k)) : 0):xtic(1) \
    lc rgb word(colours, k) title (shown(k) ? title_of(k) : "")
unset output
