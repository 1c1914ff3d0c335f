#!/usr/bin/env python3
"""norm_transposed.py IN.cl OUT.cl - the source of a layernorm_backward
variant (bench/lab/variant_source.c) with its four row sums folded over
a warp transposed: at the first shuffle each lane keeps two of the four
sums (its partner the other two), at the second one, then three plain
steps; lanes 0, 8, 16 and 24 end with sums 0 to 3. Six shuffles and adds
a row where four folds take twenty. For timing by ptx_run.c."""
import sys

src = open(sys.argv[1]).read()
old = """inline sumv row_sums(__local sumv*part,uint lid,sumv v)
{
v=(sumv)(warp_add(v.s0),warp_add(v.s1),warp_add(v.s2),
warp_add(v.s3));
if(lid%32==0){
part[lid/32]=v;
}
slot_barrier();
return warps_total(part);
}"""
new = """inline float bfly(float v,uint o)
{
float w;
asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
:"=f"(w):"f"(v),"r"(o));
return w;
}
inline sumv row_sums(__local sumv*part,uint lid,sumv v)
{
const uint lane=lid%32;
const bool hi=(lane&16)!=0,b8=(lane&8)!=0;
float k0=hi?v.s2:v.s0,k1=hi?v.s3:v.s1;
const float s0=hi?v.s0:v.s2,s1=hi?v.s1:v.s3;
k0+=bfly(s0,16);
k1+=bfly(s1,16);
float k=b8?k1:k0;
const float s=b8?k0:k1;
k+=bfly(s,8);
k+=bfly(k,4);
k+=bfly(k,2);
k+=bfly(k,1);
if((lane&7)==0){
((__local float*)part)[(lid/32)*4+lane/8]=k;
}
slot_barrier();
return warps_total(part);
}"""
if src.count(old) != 1:
    sys.exit("norm_transposed.py: row_sums not found once")
open(sys.argv[2], "w").write(src.replace(old, new))
