//===- KernelIsa.cpp - what the kernels beside it were built for ----------===//
//
// Built with the same -march as the kernels of its archive (CMakeLists.txt:
// native for libtfc_runtime.a, x86-64-v3 for libtfc_runtime_portable.a), it
// records which instruction-set extensions that -march let the C++ compiler
// use, by runtime/CpuCheck.h's names, for the check at start-up
// (runtime/CpuCheck.cpp) and `info`. Constant data only: no code of this
// file ever runs, so reading it needs nothing of the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_KERNEL_MARCH
#define TFC_KERNEL_MARCH ""
#endif

extern "C" const char tfc_kernel_march[] = TFC_KERNEL_MARCH;

extern "C" const char tfc_kernel_isa[] = ""
#if defined(__SSE3__)
                                         " sse3"
#endif
#if defined(__SSSE3__)
                                         " ssse3"
#endif
#if defined(__CX16__) || defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
                                         " cx16"
#endif
#if defined(__SSE4_1__)
                                         " sse4.1"
#endif
#if defined(__SSE4_2__)
                                         " sse4.2 crc32"
#endif
#if defined(__POPCNT__)
                                         " popcnt"
#endif
#if defined(__LAHF_SAHF__)
                                         " sahf"
#endif
#if defined(__AVX__)
                                         " avx"
#endif
#if defined(__AVX2__)
                                         " avx2"
#endif
#if defined(__BMI__)
                                         " bmi"
#endif
#if defined(__BMI2__)
                                         " bmi2"
#endif
#if defined(__F16C__)
                                         " f16c"
#endif
#if defined(__FMA__)
                                         " fma"
#endif
#if defined(__LZCNT__)
                                         " lzcnt"
#endif
#if defined(__MOVBE__)
                                         " movbe"
#endif
#if defined(__XSAVE__)
                                         " xsave"
#endif
#if defined(__AVX512F__)
                                         " avx512f"
#endif
#if defined(__AVX512DQ__)
                                         " avx512dq"
#endif
#if defined(__AVX512IFMA__)
                                         " avx512ifma"
#endif
#if defined(__AVX512CD__)
                                         " avx512cd"
#endif
#if defined(__AVX512BW__)
                                         " avx512bw"
#endif
#if defined(__AVX512VL__)
                                         " avx512vl"
#endif
#if defined(__AVX512VBMI__)
                                         " avx512vbmi"
#endif
#if defined(__AVX512VBMI2__)
                                         " avx512vbmi2"
#endif
#if defined(__AVX512VNNI__)
                                         " avx512vnni"
#endif
#if defined(__AVX512BITALG__)
                                         " avx512bitalg"
#endif
#if defined(__AVX512VPOPCNTDQ__)
                                         " avx512vpopcntdq"
#endif
#if defined(__AVX512VP2INTERSECT__)
                                         " avx512vp2intersect"
#endif
#if defined(__AVX512FP16__)
                                         " avx512fp16"
#endif
#if defined(__AVX512BF16__)
                                         " avx512bf16"
#endif
#if defined(__AVXVNNI__)
                                         " avxvnni"
#endif
#if defined(__AVXIFMA__)
                                         " avxifma"
#endif
#if defined(__AVXVNNIINT8__)
                                         " avxvnniint8"
#endif
#if defined(__AVXNECONVERT__)
                                         " avxneconvert"
#endif
#if defined(__AVXVNNIINT16__)
                                         " avxvnniint16"
#endif
#if defined(__ADX__)
                                         " adx"
#endif
#if defined(__GFNI__)
                                         " gfni"
#endif
#if defined(__PCLMUL__)
                                         " pclmul"
#endif
#if defined(__VPCLMULQDQ__)
                                         " vpclmulqdq"
#endif
#if defined(__AES__)
                                         " aes"
#endif
#if defined(__VAES__)
                                         " vaes"
#endif
#if defined(__SHA__)
                                         " sha"
#endif
#if defined(__SHA512__)
                                         " sha512"
#endif
#if defined(__SM3__)
                                         " sm3"
#endif
#if defined(__SM4__)
                                         " sm4"
#endif
#if defined(__AMX_TILE__)
                                         " amx-tile"
#endif
#if defined(__AMX_INT8__)
                                         " amx-int8"
#endif
#if defined(__AMX_BF16__)
                                         " amx-bf16"
#endif
#if defined(__AMX_FP16__)
                                         " amx-fp16"
#endif
#if defined(__AMX_COMPLEX__)
                                         " amx-complex"
#endif
#if defined(__SSE4A__)
                                         " sse4a"
#endif
#if defined(__FMA4__)
                                         " fma4"
#endif
#if defined(__XOP__)
                                         " xop"
#endif
#if defined(__TBM__)
                                         " tbm"
#endif
    ;
