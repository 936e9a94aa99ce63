set terminal pngcairo size 900,600 noenhanced
set output "projection-weak-efficiency.png"
set title "dgemm-dist projected weak (n = 16384*sqrt(GPUs), memory per GPU constant): efficiency"
set xlabel 'GPUs (H200, 8 per node: NVLink inside, one 400 Gb/s NIC per GPU between)'
set ylabel "per-GPU rate / one GPU's (n=32768)"
set logscale x 2
set key outside right top
set grid
plot "projection-weak-efficiency.dat" index 0 with linespoints pt 7 title "SUMMA n=16384*sqrt(GPUs)", \
     "projection-weak-efficiency.dat" index 1 with linespoints dashtype 2 pt 7 title "2.5-D n=16384*sqrt(GPUs)"
