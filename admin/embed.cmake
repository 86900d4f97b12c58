# Writes OUT, a C++ file defining aweft::admin::DashboardHtml() as the bytes
# of IN (cmake -DIN=... -DOUT=... -P embed.cmake). Every byte is written as a
# hex escape, so the page may hold any character.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${hex}")
# 32 bytes a line: the pattern matches 32 escapes (4 characters each).
string(REPEAT "\\\\x[0-9a-f][0-9a-f]" 32 row)
string(REGEX REPLACE "(${row})" "\\1\"\n    \"" lines "${escaped}")
file(WRITE ${OUT}.new
"// Generated from admin/dashboard.html by admin/embed.cmake: do not edit.
#include \"admin/dashboard.h\"

namespace aweft::admin {

std::string_view DashboardHtml() {
  static constexpr char kPage[] =
    \"${lines}\";
  return {kPage, sizeof kPage - 1};
}

}  // namespace aweft::admin
")
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)
