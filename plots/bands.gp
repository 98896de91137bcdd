# bands.gp: curves with bands, three panels (test accuracy, test loss, throughput), a style
# per series: a colour, a dash pattern and a marker, so that series stay apart in greyscale
# print too. Computes nothing: each series is a CSV that hetsim wrote with the columns x,
# acc_mean, acc_lo, acc_hi, loss_mean, loss_lo, loss_hi, tp_mean, tp_lo, tp_hi (a line at the
# mean, a band from lo to hi; NaN where there is no value) and, for `drops`, acc_drop,
# loss_drop and tp_drop (the mean at a row after which some runs end, NaN elsewhere).
#   hetsim plot SWEEP_DIR --by KEY   a series per group: mean and 95% interval of the mean
#                                    over its runs (or min-max, --band minmax)
#   hetsim check                     the golden band and the run (lo = hi = mean)
#
# Variables, set on a first line of input ahead of this script (or with gnuplot -e):
#   ins      space-separated CSV paths, one per series
#   titles   the series' labels in the same order, each in double quotes ("All-Reduce (n=5)")
#   heading  the figure's title (no single quotes); '' draws none
#   xlabel   the x axis label
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
#   colours, dashes, marks   optional: space-separated style numbers per series (default:
#            the series' number for each): colour 1-8 (cycled), dash pattern 1-5, marker 1-8
#   drops    optional: 1 to mark where runs end (the *_drop columns), 0 (default) not to
#   font_pt, title_pt        optional: the text's and the title's size in points (11, 14)
#   width_in, height_in      optional: a paper figure of that size in inches (pdf: points
#            at that size; png: dpi pixels an inch, text and lines scaled to match), with a
#            single legend under the panels; without them, a 1000-pixel-wide screen figure
#            with a legend beside each panel
#   layout   optional, paper figures: 'stack' (default: panels one above the other) or
#            'row' (side by side, for a page-wide figure)
#   keycols  optional, paper figures: legend columns (default 1; hetsim gives as many as its
#            longest label lets fit across the figure)
#   dpi      optional, paper PNG figures: pixels an inch (default 300)
# Example:
#   gnuplot -e "ins='a.csv b.csv'; titles='\"a\" \"b\"'; heading='x'; xlabel='s'; \
#     out='o.pdf'; fmt='pdf'; width_in=3.5; height_in=5" bands.gp

n = words(ins)
if (!exists("fmt")) fmt = "png"
if (!exists("font_pt")) font_pt = 11
if (!exists("title_pt")) title_pt = 14
if (!exists("drops")) drops = 0
if (!exists("colours")) colours = ""
if (!exists("dashes")) dashes = ""
if (!exists("marks")) marks = ""
if (!exists("layout")) layout = "stack"
if (!exists("keycols")) keycols = 1
if (!exists("dpi")) dpi = 300
paper = exists("width_in") && exists("height_in")
style(list, i) = words(list) >= i ? int(word(list, i)) : i
colour(i) = 1 + (style(colours, i) - 1) % 8
dash(i) = 1 + (style(dashes, i) - 1) % 5
mark(i) = int(word("7 5 9 11 13 4 6 8", 1 + (style(marks, i) - 1) % 8))

# Screen figures: taller with many series, so that each panel's legend fits beside it; one
# terminal per format at the same layout (a PDF at 100 pixels to the inch).
height = n > 16 ? 1100 + 3 * 17 * (n - 16) : 1100
screen(w, h, f) = fmt eq "pdf" \
    ? sprintf('set terminal pdfcairo size %gin,%gin font "Sans,%g" noenhanced linewidth 1', \
              w / 100.0, h / 100.0, f) \
    : fmt eq "svg" \
    ? sprintf('set terminal svg size %d,%d font "Sans,%g" noenhanced linewidth 1 background "white"', \
              w, h, f) \
    : sprintf('set terminal pngcairo size %d,%d font "Sans,%g" noenhanced linewidth 1', w, h, f)
# Paper figures: text at font_pt points at the figure's own size (cairo draws a font size
# times fontscale times 4/3 in points), lines 1 point wide.
sheet(w, h, f) = fmt eq "pdf" \
    ? sprintf('set terminal pdfcairo size %gin,%gin font "Sans,%g" fontscale 0.75 noenhanced linewidth 1', \
              w, h, f) \
    : fmt eq "svg" \
    ? sprintf('set terminal svg size %d,%d font "Sans,%g" fontscale 1 noenhanced linewidth 1 background "white"', \
              w * 72, h * 72, f) \
    : sprintf('set terminal pngcairo size %d,%d font "Sans,%g" fontscale %g noenhanced linewidth %g', \
              w * dpi, h * dpi, f, 0.75 * dpi / 72.0, dpi / 72.0)
if (paper) { eval sheet(width_in, height_in, font_pt) } else { eval screen(1000, height, font_pt) }
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
set xrange [0:*]
dropped = "runs end here (mean over fewer after)"

# The layout: screen figures a legend beside each panel; paper figures one legend, a plot of
# its own across the figure's foot, in room kept for its rows of text, and the three panels
# placed above it by their margins (for their labels: 5.2 characters' room left of each
# panel, 3.4 lines under the lowest).
pt_h = paper ? height_in * 72.0 : 1
pt_w = paper ? width_in * 72.0 : 1
rows = int(ceil((n + drops) / (keycols * 1.0)))
keyroom = paper ? (rows * 1.3 * font_pt + 0.6 * font_pt) / pt_h : 0
top = paper ? (strlen(heading) > 0 ? 1 - 2.0 * title_pt / pt_h : 1 - 0.6 * font_pt / pt_h) : 0
left = paper ? 5.2 * font_pt / pt_w : 0
bottom = keyroom + (paper ? 3.4 * font_pt / pt_h : 0)
row = layout eq "row"
gap = row ? left : 1.6 * font_pt / pt_h
size = row ? (0.985 - left - 2 * gap) / 3 : (top - bottom - 2 * gap) / 3
x0(k) = row ? left + (k - 1) * (size + gap) : left
x1(k) = row ? x0(k) + size : 0.97
y1(k) = row ? top : top - (k - 1) * (size + gap)
y0(k) = row ? bottom : y1(k) - size
place(k) = sprintf("set lmargin at screen %g; set rmargin at screen %g; " . \
                   "set bmargin at screen %g; set tmargin at screen %g", x0(k), x1(k), y0(k), y1(k))
if (!paper) {
    set key outside right top vertical Left reverse samplen 4 spacing (n > 12 ? 1.0 : 1.2) width 1
    if (strlen(heading) > 0) {
        set multiplot layout 3,1 title heading font sprintf("Sans,%g", title_pt)
    } else {
        set multiplot layout 3,1
    }
} else {
    set key off
    set multiplot
    if (strlen(heading) > 0) {
        set label 99 heading at screen 0.5, screen 1 - 0.9 * title_pt / pt_h center \
            font sprintf("Sans,%g", title_pt)
    }
    if (row) { set xlabel xlabel }
}
label(i) = paper ? "" : word(titles, i)

if (paper) { eval place(1) }
set ylabel "test accuracy"
set yrange [0:1]
if (paper && !row) { set format x "" }
plot for [i = 1:n] word(ins, i) using "x":"acc_lo":"acc_hi" with filledcurves lt colour(i) notitle, \
     for [i = 1:n] word(ins, i) using "x":"acc_mean" with linespoints lt colour(i) lw 2 \
         dt dash(i) pt mark(i) pn 6 title label(i), \
     for [i = 1:(drops ? n : 0)] word(ins, i) using "x":"acc_drop" with points lc rgb "#000000" \
         pt 6 ps 1.2 notitle
unset label 99

if (paper) { eval place(2) }
set ylabel "test loss"
set yrange [0:*]
plot for [i = 1:n] word(ins, i) using "x":"loss_lo":"loss_hi" with filledcurves lt colour(i) notitle, \
     for [i = 1:n] word(ins, i) using "x":"loss_mean" with linespoints lt colour(i) lw 2 \
         dt dash(i) pt mark(i) pn 6 title label(i), \
     for [i = 1:(drops ? n : 0)] word(ins, i) using "x":"loss_drop" with points lc rgb "#000000" \
         pt 6 ps 1.2 notitle

if (paper) { eval place(3) }
# Paper panels keep 5.2 characters for tick labels and the axis label: 14000 reads 14k.
if (paper) { set format y "%.0s%c" }
set ylabel "samples / s"
set xlabel xlabel
set format x "% h"
plot for [i = 1:n] word(ins, i) using "x":"tp_lo":"tp_hi" with filledcurves lt colour(i) notitle, \
     for [i = 1:n] word(ins, i) using "x":"tp_mean" with linespoints lt colour(i) lw 2 \
         dt dash(i) pt mark(i) pn 6 title label(i), \
     for [i = 1:(drops ? n : 0)] word(ins, i) using "x":"tp_drop" with points lc rgb "#000000" \
         pt 6 ps 1.2 title (paper || i > 1 ? "" : dropped)

# Paper figures: the legend, a plot of nothing (NaN in fixed ranges) across the foot.
if (paper) {
    set lmargin at screen 0.02
    set rmargin at screen 0.98
    set bmargin at screen 0
    set tmargin at screen keyroom
    unset border
    unset tics
    unset grid
    unset xlabel
    unset ylabel
    set xrange [0:1]
    set yrange [0:1]
    set key center center horizontal Left reverse samplen 2.5 spacing 1.0 maxcols keycols \
        width 1
    plot for [i = 1:n] NaN with linespoints lt colour(i) lw 2 dt dash(i) pt mark(i) \
             title word(titles, i), \
         for [j = 1:drops] NaN with points lc rgb "#000000" pt 6 ps 1.2 title dropped
}

unset multiplot
unset output
