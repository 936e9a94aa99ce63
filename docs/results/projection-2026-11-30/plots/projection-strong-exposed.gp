set terminal pngcairo size 900,600 noenhanced
set output "projection-strong-exposed.png"
set title "dgemm-dist projected strong (fixed n): exposed communication"
set xlabel 'GPUs (H200, 8 per node: NVLink inside, one 400 Gb/s NIC per GPU between)'
set ylabel "% of the multiply phase"
set logscale x 2
set key outside right top
set grid
plot "projection-strong-exposed.dat" index 0 with linespoints pt 7 title "SUMMA n=32768", \
     "projection-strong-exposed.dat" index 1 with linespoints pt 5 title "SUMMA n=65536", \
     "projection-strong-exposed.dat" index 2 with linespoints pt 9 title "SUMMA n=131072", \
     "projection-strong-exposed.dat" index 3 with linespoints pt 11 title "SUMMA n=262144"
