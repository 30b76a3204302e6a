# tfc_add_model(NAME SOURCES model.cpp... [MODEL name] [BATCH n] [TFC_FLAGS ...])
#
# Builds a C++ DSL model the way `tfc compile model.tf -o NAME` builds a .tf
# file, as Halide builds its generators: the sources (each defining models
# with TFC_MODEL) are linked with the DSL into a generator program NAME-gen,
# which runs at build time and prints the model's tf IR (NAME.mlir); tfc then
# compiles that IR through the same pipeline into the executable NAME (in
# CMAKE_RUNTIME_OUTPUT_DIRECTORY or the current binary dir), with the same
# command line as every compiled model (info, init, predict, ...).
#
# MODEL picks one model when the sources define several (default: the only
# one); BATCH overrides the model's batch size; TFC_FLAGS go to `tfc compile`
# (e.g. --attention-maps).
#
# Targets: NAME-gen (the generator), NAME-compile (runs it and tfc; part of
# `all`) and NAME, an imported executable whose file is the compiled model,
# so that add_test(COMMAND NAME), $<TARGET_FILE:NAME>, add_dependencies(X
# NAME) and install(IMPORTED_RUNTIME_ARTIFACTS NAME) work as for any
# executable. (A custom target NAME would clash with a binary NAME in the
# top build directory: Ninja refuses two rules for one path.)
#
# Works the same with tfc as a subdirectory (add_subdirectory, FetchContent)
# and installed (find_package(tfc CONFIG)): it uses only the tfc:: targets
# (cmake/TfcPackage.cmake), never tfc's source or build paths.
function(tfc_add_model name)
  cmake_parse_arguments(ARG "" "MODEL;BATCH" "SOURCES;TFC_FLAGS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tfc_add_model(${name}): SOURCES is required")
  endif()
  add_executable(${name}-gen ${ARG_SOURCES})
  target_link_libraries(${name}-gen PRIVATE tfc::TfcModelMain)
  set_target_properties(${name}-gen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/generators)

  set(gen_args)
  if(ARG_MODEL)
    list(APPEND gen_args --model ${ARG_MODEL})
  endif()
  if(ARG_BATCH)
    list(APPEND gen_args --batch ${ARG_BATCH})
  endif()
  if("--attention-maps" IN_LIST ARG_TFC_FLAGS)
    list(APPEND gen_args --attention-maps)
    list(REMOVE_ITEM ARG_TFC_FLAGS --attention-maps)
  endif()
  if(CMAKE_RUNTIME_OUTPUT_DIRECTORY)
    set(out_dir ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
  else()
    set(out_dir ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(ir ${CMAKE_CURRENT_BINARY_DIR}/${name}.mlir)
  set(binary ${out_dir}/${name})
  add_custom_command(OUTPUT ${ir}
    COMMAND $<TARGET_FILE:${name}-gen> ${gen_args} > ${ir}.partial
    COMMAND ${CMAKE_COMMAND} -E rename ${ir}.partial ${ir}
    DEPENDS ${name}-gen
    COMMENT "Building the tf IR of model ${name}")
  # TFC_RUNTIME_ARCHIVES: in tfc's build, the runtimes tfc links (a change
  # relinks the model); installed, they change only with tfc itself.
  # The target depends on a stamp, not on the binary: CMake takes a
  # dependency on a file named as a target in that target's directory for
  # one on the target, which would make NAME-compile depend on itself.
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${name}.compiled)
  add_custom_command(OUTPUT ${stamp} ${binary}
    COMMAND $<TARGET_FILE:tfc::tfc> compile ${ir} ${ARG_TFC_FLAGS} -o ${binary}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS ${ir} tfc::tfc ${TFC_RUNTIME_ARCHIVES}
    COMMENT "Compiling model ${name} with tfc")
  add_custom_target(${name}-compile ALL DEPENDS ${stamp})
  add_executable(${name} IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES IMPORTED_LOCATION ${binary})
  add_dependencies(${name} ${name}-compile)
endfunction()
