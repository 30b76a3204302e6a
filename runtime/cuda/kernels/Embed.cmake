# cmake -DBIN2C=... -DINPUT=x.fatbin -DNAME=tfc_cuda_x_fatbin -DOUTPUT=x_fatbin.c -P Embed.cmake
# bin2c's array, made 16-byte aligned (the driver reads the fatbin header's
# 64-bit fields in place), plus its size: `const size_t NAME_size`.
execute_process(COMMAND ${BIN2C} -c --name ${NAME} ${INPUT}
                OUTPUT_VARIABLE array RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bin2c ${INPUT}: ${err}")
endif()
string(REPLACE "const unsigned char ${NAME}[]"
       "__attribute__((aligned(16))) const unsigned char ${NAME}[]" array "${array}")
string(FIND "${array}" "aligned(16)" found)
if(found EQUAL -1)
  message(FATAL_ERROR "bin2c's output for ${NAME} has an unexpected form")
endif()
file(WRITE ${OUTPUT}.tmp "/* Generated from ${INPUT} by bin2c (Embed.cmake). */\n#include <stddef.h>\n${array}\nconst size_t ${NAME}_size = sizeof(${NAME});\n")
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
