# check.gp: `hetsim check`'s figure. Four panels: test accuracy, test loss and throughput
# against time (the golden seeds' mean with their min-max band, the check's runs' mean with
# theirs), then the statistics that were tested, each as the distance of the runs' mean from
# the golden mean in units of its band's half-width: the band that was tested is [-1, 1].
# Computes nothing: hetsim writes the CSVs.
#   golden   the golden's band CSV (x, acc_mean, acc_lo, acc_hi, loss_*, tp_*)
#   run      the runs' band CSV (same columns)
#   stats    check.csv (i, statistic, curve, golden_mean, golden_sd, run_mean, half_width,
#            floor, z, ok)
#   ngolden  golden seeds; nrun: run seeds
#   acc      optional: 0 when no curve has a test accuracy (a timing-only model): the
#            accuracy and loss panels then say so instead (1)
#   xlabel   the x axis label
#   out      the figure to write
#   fmt      optional: png (default), pdf or svg
#   font_pt, title_pt  optional: the text's and the title's size in points (11, 14)
# Example:
#   gnuplot -e "golden='g.csv'; run='r.csv'; stats='check.csv'; ngolden=5; nrun=2; \
#     xlabel='s'; out='o.png'" check.gp

# The figure's format: fmt ('png', 'pdf' or 'svg'; hetsim sets it from the file name),
# one terminal per format at the same layout (a PDF at 100 pixels to the inch).
if (!exists("fmt")) fmt = "png"
if (!exists("acc")) acc = 1
if (!exists("font_pt")) font_pt = 11
if (!exists("title_pt")) title_pt = 14
terminal(w, h, f) = fmt eq "pdf" \
    ? sprintf('set terminal pdfcairo size %gin,%gin font "Sans,%d" noenhanced linewidth 1', \
              w / 100.0, h / 100.0, f) \
    : fmt eq "svg" \
    ? sprintf('set terminal svg size %d,%d font "Sans,%d" noenhanced linewidth 1 background "white"', \
              w, h, f) \
    : sprintf('set terminal pngcairo size %d,%d font "Sans,%d" noenhanced linewidth 1', w, h, f)
eval terminal(1000, 1300, font_pt)
set output out
set encoding utf8

set datafile separator ","
set datafile columnheaders
set datafile missing "NaN"
set style fill transparent solid 0.2 noborder
set grid xtics ytics lt 1 lc rgb "#dddddd" lw 1 dt solid
set border 3
set xtics nomirror
set ytics nomirror
set key inside right bottom vertical Left reverse samplen 3 spacing 1.1 box opaque
set xrange [0:*]

gtitle = sprintf("golden, %d seeds: mean, min-max", ngolden)
rtitle = sprintf("check, %d seed%s: mean, min-max", nrun, nrun > 1 ? "s" : "")
gcol = "#0072B2"
rcol = "#D55E00"

set multiplot layout 4,1 title "check: runs against the golden" font sprintf("Sans,%d", title_pt)

set ylabel "test accuracy"
set yrange [0:1]
if (acc) {
plot golden using "x":"acc_lo":"acc_hi" with filledcurves lc rgb gcol notitle, \
     golden using "x":"acc_mean" with lines lc rgb gcol lw 2 title gtitle, \
     run using "x":"acc_lo":"acc_hi" with filledcurves lc rgb rcol notitle, \
     run using "x":"acc_mean" with lines lc rgb rcol lw 2 title rtitle
} else {
set xrange [0:1]
unset key
set label 1 "no test accuracy (a timing-only model)" at graph 0.5, 0.5 center
plot NaN notitle
unset label 1
}

set key inside right top
set ylabel "test loss"
set yrange [0:*]
if (acc) {
plot golden using "x":"loss_lo":"loss_hi" with filledcurves lc rgb gcol notitle, \
     golden using "x":"loss_mean" with lines lc rgb gcol lw 2 title gtitle, \
     run using "x":"loss_lo":"loss_hi" with filledcurves lc rgb rcol notitle, \
     run using "x":"loss_mean" with lines lc rgb rcol lw 2 title rtitle
} else {
unset key
set yrange [0:1]
set label 1 "no test loss (a timing-only model)" at graph 0.5, 0.5 center
plot NaN notitle
unset label 1
set xrange [0:*]
set yrange [0:*]
}

set key inside right bottom
set ylabel "samples / s"
set xlabel xlabel
plot golden using "x":"tp_lo":"tp_hi" with filledcurves lc rgb gcol notitle, \
     golden using "x":"tp_mean" with lines lc rgb gcol lw 2 title gtitle, \
     run using "x":"tp_lo":"tp_hi" with filledcurves lc rgb rcol notitle, \
     run using "x":"tp_mean" with lines lc rgb rcol lw 2 title rtitle

set title "tested: (run mean - golden mean) / band half-width; |value| <= 1 passes"
set xlabel ""
set ylabel "band half-widths"
set xrange [-0.5:4.5]
set yrange [-3:3]
set xtics () rotate by 0
set key outside below center horizontal
clip(z) = z > 2.85 ? 2.85 : (z < -2.85 ? -2.85 : z)
plot stats using "i":(-1):(1) with filledcurves lc rgb gcol title "tested band", \
     stats using "i":(column("ok") > 0 ? clip(column("z")) : 1/0):xtic(2) with points pt 7 \
         ps 2 lc rgb "#009E73" title "within", \
     stats using "i":(column("ok") > 0 ? 1/0 : clip(column("z"))) with points pt 9 ps 2 \
         lc rgb rcol title "out of band (drawn at +-2.85 beyond)"

unset multiplot
unset output
