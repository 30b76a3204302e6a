# cmake -DPTXAS=... -DSTACK_BUDGET=N -DPTX="a.ptx;a.sm80.ptx;..." -P PtxasCheck.cmake
# Runs `ptxas -arch=sm_90 -v` (`-arch=sm_80` for a .sm80.ptx, the
# compute_80 PTX; `-arch=sm_90a` for a .sm90a.ptx, wgmma's kernels) on each
# kernel file's PTX and fails on an
# error (an unresolved extern function among them), a `.extern .func` left
# in the PTX, any spill, or a stack frame above STACK_BUDGET bytes, and
# unless every kernel of the sm_90 PTX waits for the kernel before it
# (griddepcontrol.wait: programmatic dependent launch, Warp.cuh) and none
# of the sm_80 PTX does (sm_80 has no such instruction). Prints every
# kernel's registers, stack and shared memory.
set(failures 0)
foreach(ptx ${PTX})
  file(READ ${ptx} text)
  if(text MATCHES "\\.extern[ \t]+\\.func[^\n]*")
    message(SEND_ERROR "${ptx}: unresolved function: ${CMAKE_MATCH_0}")
    math(EXPR failures "${failures} + 1")
  endif()
  set(arch sm_90)
  if(ptx MATCHES "\\.sm80\\.ptx$")
    set(arch sm_80)
  elseif(ptx MATCHES "\\.sm90a\\.ptx$") # wgmma's kernels (attention_wgmma.cu)
    set(arch sm_90a)
  endif()
  string(REGEX MATCHALL "\\.entry" entries "${text}")
  string(REGEX MATCHALL "griddepcontrol\\.wait" waits "${text}")
  list(LENGTH entries entryCount)
  list(LENGTH waits waitCount)
  if(arch MATCHES "^sm_90" AND NOT waitCount EQUAL entryCount)
    message(SEND_ERROR "${ptx}: ${entryCount} kernels, ${waitCount} griddepcontrol.wait: every "
                       "kernel must start with awaitPreviousKernel() (Warp.cuh)")
    math(EXPR failures "${failures} + 1")
  elseif(arch STREQUAL "sm_80" AND NOT waitCount EQUAL 0)
    message(SEND_ERROR "${ptx}: griddepcontrol in sm_80 PTX")
    math(EXPR failures "${failures} + 1")
  endif()
  execute_process(COMMAND ${PTXAS} -arch=${arch} -v ${ptx} -o ${ptx}.cubin
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(APPEND out "${err}")
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "ptxas failed on ${ptx}:\n${out}")
    math(EXPR failures "${failures} + 1")
    continue()
  endif()
  # "Function properties for K\n    S bytes stack frame, A bytes spill stores,
  # B bytes spill loads\n...Used R registers, ..."
  string(REGEX MATCHALL "Function properties for [A-Za-z0-9_]+\n[^\n]*\n[^\n]*Used [0-9]+ registers[^\n]*"
         kernels "${out}")
  if(NOT kernels)
    message(SEND_ERROR "${ptx}: no kernel found in ptxas's report:\n${out}")
    math(EXPR failures "${failures} + 1")
  endif()
  foreach(kernel ${kernels})
    string(REGEX MATCH "Function properties for ([A-Za-z0-9_]+)" _ "${kernel}")
    set(name ${CMAKE_MATCH_1})
    string(REGEX MATCH "([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads" _ "${kernel}")
    set(stack ${CMAKE_MATCH_1})
    set(stores ${CMAKE_MATCH_2})
    set(loads ${CMAKE_MATCH_3})
    string(REGEX MATCH "Used ([0-9]+) registers" _ "${kernel}")
    set(registers ${CMAKE_MATCH_1})
    set(smem 0)
    if(kernel MATCHES "([0-9]+) bytes smem")
      set(smem ${CMAKE_MATCH_1})
    endif()
    message(STATUS "${name} (${arch}): ${registers} registers, ${stack} B stack, ${stores}/${loads} B spilled, ${smem} B shared")
    if(NOT stores EQUAL 0 OR NOT loads EQUAL 0)
      message(SEND_ERROR "${name} spills registers on ${arch} (${stores} B stored, ${loads} B loaded)")
      math(EXPR failures "${failures} + 1")
    endif()
    if(stack GREATER STACK_BUDGET)
      message(SEND_ERROR "${name} has a ${stack} B stack frame on ${arch} (budget ${STACK_BUDGET} B)")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} ptxas check(s) failed")
endif()
