set terminal pngcairo size 900,600 noenhanced
set output "projection-weak-tflops.png"
set title "dgemm-dist projected weak (n = 16384*sqrt(GPUs), memory per GPU constant): TFLOP/s"
set xlabel 'GPUs (H200, 8 per node: NVLink inside, one 400 Gb/s NIC per GPU between)'
set ylabel "TFLOP/s (FP64, 08_dmma)"
set logscale x 2
set key outside right top
set grid
set logscale y 2
plot "projection-weak-tflops.dat" index 0 with linespoints pt 7 title "SUMMA n=16384*sqrt(GPUs)", \
     x*50.816 with lines dashtype 3 lc rgb 'gray' title 'ideal'
