// Text that goes into messages and JSON output: one line, valid UTF-8.
//
// Entry points: oneLine (control characters escaped), toValidUtf8 (ill-formed sequences
// replaced), cutUtf8 (a prefix that ends at a character boundary), firstLine; isIdentifier
// (an ASCII Python name).
#pragma once

#include <string>
#include <string_view>

namespace tf {

// `text` as one line: control characters (a newline in a quoted key, a carriage return in a
// tool's message) written as C escapes (a newline as the two characters \ and n, byte 0x1a
// as \x1a), so that a message quoting user input stays one line. Tabs are kept.
std::string oneLine(std::string_view text);

// `text` with each ill-formed UTF-8 sequence (a stray byte, an overlong form, a surrogate, a
// sequence cut short) replaced by U+FFFD: text that JSON output can always carry.
std::string toValidUtf8(std::string_view text);

// The longest prefix of valid UTF-8 `text` of at most `max_bytes` that does not cut a
// character in two.
std::string cutUtf8(std::string_view text, size_t max_bytes);

// The first line of `text` (any bytes) as one line of valid UTF-8, cut to `max_bytes` at a
// character boundary with "..." after a cut.
std::string firstLine(std::string_view text, size_t max_bytes);

// Whether `s` is an ASCII identifier: a letter or `_`, then letters, digits or `_`.
bool isIdentifier(std::string_view s);

}  // namespace tf
