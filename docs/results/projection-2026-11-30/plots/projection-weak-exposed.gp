set terminal pngcairo size 900,600 noenhanced
set output "projection-weak-exposed.png"
set title "dgemm-dist projected weak (n = 16384*sqrt(GPUs), memory per GPU constant): exposed communication"
set xlabel 'GPUs (H200, 8 per node: NVLink inside, one 400 Gb/s NIC per GPU between)'
set ylabel "% of the multiply phase"
set logscale x 2
set key outside right top
set grid
plot "projection-weak-exposed.dat" index 0 with linespoints pt 7 title "SUMMA n=16384*sqrt(GPUs)"
