# The CUDA runtime's binaries end to end (issue 26), where it is built
# (runtime/cuda/CMakeLists.txt) and the fakes are (tests/unit/): no GPU used.
if(NOT TARGET tfc_runtime_cuda OR NOT TARGET tfc_fake_cublaslt)
  return()
endif()
# A model written as tfc --target=cuda writes one, linked with the CUDA
# runtime alone: what a compiled CUDA binary links.
add_executable(cuda_hand_model CudaHandModel.cpp)
target_link_libraries(cuda_hand_model PRIVATE tfc_runtime_cuda)
set_target_properties(cuda_hand_model PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bin)

add_executable(CudaBinaryTest CudaBinaryTest.cpp)
target_link_libraries(CudaBinaryTest PRIVATE tfc_runtime_io GTest::gtest GTest::gtest_main
  Threads::Threads)
target_include_directories(CudaBinaryTest PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_definitions(CudaBinaryTest PRIVATE
  TFC_CUDA_HAND_MODEL="$<TARGET_FILE:cuda_hand_model>"
  TFC_FAKE_CUDA_DRIVER="$<TARGET_FILE:tfc_fake_cuda>"
  TFC_FAKE_CUBLASLT="$<TARGET_FILE:tfc_fake_cublaslt>")
set_target_properties(CudaBinaryTest PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bin)
add_dependencies(CudaBinaryTest cuda_hand_model tfc_fake_cuda tfc_fake_cublaslt)
add_test(NAME CudaBinaryTest COMMAND CudaBinaryTest)

# tfc --target=cuda's own binaries (CudaCompiledTest.cpp): ptxas on every
# seed model's kernels, a fatbin binary without a driver, every entry's host
# path on the fakes. Needs the toolkit tfc assembles with (ptxas beside
# nvcc: runtime/cuda/kernels/CMakeLists.txt), passed to tfc as --cuda-path.
if(TFC_PTXAS AND TARGET tfc)
  get_filename_component(tfc_cuda_toolkit ${TFC_PTXAS} DIRECTORY)
  get_filename_component(tfc_cuda_toolkit ${tfc_cuda_toolkit} DIRECTORY)
  add_executable(CudaCompiledTest CudaCompiledTest.cpp ${PROJECT_SOURCE_DIR}/runtime/Manifest.cpp)
  target_link_libraries(CudaCompiledTest PRIVATE tfc_runtime_io GTest::gtest GTest::gtest_main
    Threads::Threads)
  target_include_directories(CudaCompiledTest PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(CudaCompiledTest PRIVATE
    TFC_BINARY="$<TARGET_FILE:tfc>" TFC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TFC_CUDA_TOOLKIT="${tfc_cuda_toolkit}"
    TFC_FAKE_CUDA_DRIVER="$<TARGET_FILE:tfc_fake_cuda>"
    TFC_FAKE_CUBLASLT="$<TARGET_FILE:tfc_fake_cublaslt>")
  set_target_properties(CudaCompiledTest PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/bin)
  add_dependencies(CudaCompiledTest tfc tfc_runtime_cuda tfc_fake_cuda tfc_fake_cublaslt)
  add_test(NAME CudaCompiledTest COMMAND CudaCompiledTest)
endif()
