for hh in 32,8 8,8; do for b in 1 8 32; do for lk in 1024 4096 16384 32768; do
 [ $b = 32 ] && [ $lk = 32768 ] && continue
 hq=${hh%,*}; hkv=${hh#*,}; s=$b,$hq,$hkv,1,$lk
 echo "$s $(./est.sh dec_4x16.hsaco $s 3) $(./est.sh dec_4x32.hsaco $s 3)"
done; done; done
