# Writes a C++ source that holds a text file as a string constant (the Gluon templates that
# passes emit into a kernel's module). Run as a build step (cmake -P), so an edit of the
# text is compiled in without configuring again.
#
# Inputs: INPUT (the text file), OUTPUT (the .cpp to write), SYMBOL (the constant's name in
# namespace tf). The text must not hold the raw string's closing delimiter `)tfembed"`.
file(READ "${INPUT}" text)
string(FIND "${text}" ")tfembed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} holds the raw string delimiter )tfembed\"")
endif()
set(out "// Generated from ${INPUT} by cmake/embed_text.cmake: do not edit.\nnamespace tf {\nextern const char* const ${SYMBOL};\nconst char* const ${SYMBOL} = R\"tfembed(${text})tfembed\";\n}  // namespace tf\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL out)
  file(WRITE "${OUTPUT}" "${out}")
endif()
