set terminal pngcairo size 900,600 noenhanced
set output "projection-strong-efficiency.png"
set title "dgemm-dist projected strong (fixed n): efficiency"
set xlabel 'GPUs (H200, 8 per node: NVLink inside, one 400 Gb/s NIC per GPU between)'
set ylabel "per-GPU rate / one GPU's (n=32768)"
set logscale x 2
set key outside right top
set grid
plot "projection-strong-efficiency.dat" index 0 with linespoints pt 7 title "SUMMA n=32768", \
     "projection-strong-efficiency.dat" index 1 with linespoints dashtype 2 pt 7 title "2.5-D n=32768", \
     "projection-strong-efficiency.dat" index 2 with linespoints pt 5 title "SUMMA n=65536", \
     "projection-strong-efficiency.dat" index 3 with linespoints dashtype 2 pt 5 title "2.5-D n=65536", \
     "projection-strong-efficiency.dat" index 4 with linespoints pt 9 title "SUMMA n=131072", \
     "projection-strong-efficiency.dat" index 5 with linespoints dashtype 2 pt 9 title "2.5-D n=131072", \
     "projection-strong-efficiency.dat" index 6 with linespoints pt 11 title "SUMMA n=262144", \
     "projection-strong-efficiency.dat" index 7 with linespoints dashtype 2 pt 11 title "2.5-D n=262144"
