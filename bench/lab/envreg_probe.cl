/* envreg_probe.cl - one kernel per OpenCL work-item builtin, so that the
 * PTX NVIDIA's OpenCL compiler makes of each (bench/lab/ptx_info.c)
 * shows which %envreg it reads: ptx_run.c must give those registers the
 * values an OpenCL launch would. */
__kernel void num_groups0(__global uint *out) { out[0] = get_num_groups(0); }
__kernel void num_groups1(__global uint *out) { out[0] = get_num_groups(1); }
__kernel void global_size0(__global uint *out) { out[0] = get_global_size(0); }
__kernel void global_size1(__global uint *out) { out[0] = get_global_size(1); }
__kernel void global_offset0(__global uint *out)
{
    out[0] = get_global_offset(0);
}
__kernel void global_offset1(__global uint *out)
{
    out[0] = get_global_offset(1);
}
__kernel void global_id0(__global uint *out) { out[0] = get_global_id(0); }
__kernel void group_id0(__global uint *out) { out[0] = get_group_id(0); }
__kernel void group_id1(__global uint *out) { out[0] = get_group_id(1); }
__kernel void local_size0(__global uint *out) { out[0] = get_local_size(0); }
