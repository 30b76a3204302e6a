# cmake -P CppModelProject.cmake: builds examples/cpp-model as a user's own
# project would, and checks what it built (tests/cmake/CMakeLists.txt).
#   -DMODE=installed     installs tfc (TFC_BUILD_DIR) into WORK/prefix and
#                        builds the example with find_package(tfc CONFIG);
#                        also compiles models/reverse.tf with the installed tfc
#   -DMODE=subdirectory  builds the example with add_subdirectory(TFC_SOURCE_DIR)
#   -DTFC_SOURCE_DIR= -DTFC_BUILD_DIR= -DWORK= -DGENERATOR=
# Then: the model binary trains one epoch to a validation accuracy above 0.5
# (chance is 0.1), and its IR, printed by the generator at build time, is the
# IR `tfc compile --emit=mlir` builds from its .tf twin.

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}")
  endif()
endfunction()

set(example ${TFC_SOURCE_DIR}/examples/cpp-model)
file(REMOVE_RECURSE ${WORK})
set(build ${WORK}/build)
set(configure ${CMAKE_COMMAND} -S ${example} -B ${build} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release)
find_program(ccache ccache)
if(ccache)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${ccache})
endif()

if(MODE STREQUAL "installed")
  set(prefix ${WORK}/prefix)
  run(${CMAKE_COMMAND} --install ${TFC_BUILD_DIR} --prefix ${prefix})
  set(tfc ${prefix}/bin/tfc)
  run(${configure} -DCMAKE_PREFIX_PATH=${prefix})
  # The installed tfc still compiles a .tf file: it finds its runtime in
  # PREFIX/lib, beside its bin/.
  run(${tfc} compile ${TFC_SOURCE_DIR}/models/reverse.tf -o ${WORK}/reverse)
  run(${WORK}/reverse info)
elseif(MODE STREQUAL "subdirectory")
  set(tfc ${build}/tfc/bin/tfc)
  run(${configure} -DTFC_SOURCE_TREE=${TFC_SOURCE_DIR})
else()
  message(FATAL_ERROR "MODE must be installed or subdirectory, not '${MODE}'")
endif()
run(${CMAKE_COMMAND} --build ${build} -j 2)

# What tfc_add_model built: the binary named as asked, in the build directory.
set(model ${build}/reverse8)
if(NOT EXISTS ${model})
  message(FATAL_ERROR "tfc_add_model(reverse8) built no ${model}")
endif()
if(EXISTS ${build}/tests OR EXISTS ${build}/tfc/tests OR EXISTS ${build}/tfc/models/bin)
  message(FATAL_ERROR "a user's project built tfc's tests or seed models")
endif()

# The generator's IR is the .tf twin's.
execute_process(COMMAND ${tfc} compile ${example}/reverse8.tf --emit=mlir
  OUTPUT_FILE ${WORK}/reverse8.tf.mlir RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tfc compile reverse8.tf --emit=mlir failed (${rc})")
endif()
file(READ ${build}/reverse8.mlir cpp_ir)
file(READ ${WORK}/reverse8.tf.mlir tf_ir)
if(NOT cpp_ir STREQUAL tf_ir OR cpp_ir STREQUAL "")
  message(FATAL_ERROR "reverse8.cpp and reverse8.tf build different IR: "
    "diff ${build}/reverse8.mlir ${WORK}/reverse8.tf.mlir")
endif()

# One epoch of the train block's settings.
run(${model} train --run-dir ${WORK}/run --epochs 1 --threads 2)
file(STRINGS ${WORK}/run/metrics.jsonl lines REGEX "\"split\": \"val\"")
list(POP_BACK lines last)
string(JSON accuracy ERROR_VARIABLE error GET "${last}" accuracy)
if(error OR NOT accuracy GREATER 0.5)
  message(FATAL_ERROR "reverse8 after one epoch: validation accuracy '${accuracy}' "
    "(want > 0.5): ${last}")
endif()
message(STATUS "reverse8 (${MODE}): the same IR as reverse8.tf; one epoch: val accuracy ${accuracy}")
