set terminal pngcairo size 900,600 noenhanced
set output "projection-strong-tflops.png"
set title "dgemm-dist projected strong (fixed n): TFLOP/s"
set xlabel 'GPUs (H200, 8 per node: NVLink inside, one 400 Gb/s NIC per GPU between)'
set ylabel "TFLOP/s (FP64, 08_dmma)"
set logscale x 2
set key outside right top
set grid
set logscale y 2
plot "projection-strong-tflops.dat" index 0 with linespoints pt 7 title "SUMMA n=32768", \
     "projection-strong-tflops.dat" index 1 with linespoints pt 5 title "SUMMA n=65536", \
     "projection-strong-tflops.dat" index 2 with linespoints pt 9 title "SUMMA n=131072", \
     "projection-strong-tflops.dat" index 3 with linespoints pt 11 title "SUMMA n=262144", \
     x*50.816 with lines dashtype 3 lc rgb 'gray' title 'ideal'
