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
#   heading  the figure's title (no single quotes); '' draws none
#   ylabel   the y axis label
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
#   font_pt, title_pt        optional: the text's and the title's size in points (12, 14)
#   width_in, height_in      optional: a paper figure of that size in inches (pdf: points at
#            that size; png: dpi pixels an inch, text and lines scaled to match); without
#            them, a screen figure (a PDF at 100 pixels to the inch)
#   dpi      optional, paper PNG figures: pixels an inch (default 300)
# Example:
#   gnuplot -e "in='ttt.csv'; heading='time to target'; ylabel='s'; out='ttt.png'" bars.gp

if (!exists("nbars")) nbars = 1
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
if (paper) { eval sheet(width_in, height_in, font_pt) } else { eval screen(nbars > 12 ? 900 + 45 * (nbars - 12) : 900, 600, font_pt) }
set output out
# The notes over and under the bars: smaller on screen, the text's size on paper.
note_pt = paper ? font_pt : font_pt - 2
set encoding utf8
set datafile separator ","
set datafile columnheaders
set datafile missing "NaN"
# The first column is a display name, text of the user's: a "#" opening it is no comment.
set datafile commentschars ""
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 3
set xtics nomirror rotate by -30
set ytics nomirror
set yrange [0:*]
set offsets 0.5, 0.5, graph 0.15, 0
if (strlen(heading) > 0) { set title heading font sprintf("Sans,%g", title_pt) }
set ylabel ylabel
set key off
plot in using 0:"mean":xtic(1) with boxes lc rgb "#0072B2", \
     in using 0:"mean":"lo":"hi" with yerrorbars lc rgb "#000000" pt 0, \
     in using 0:"top":"note_top" with labels offset 0,0.8 font sprintf("Sans,%g", note_pt), \
     in using 0:"low":"note_low" with labels rotate by 90 left offset 0,0.5 \
         font sprintf("Sans,%g", note_pt) \
         tc rgb "#D55E00"
unset output
