#pragma once

#include <string_view>

namespace aweft::admin {

// The dashboard page (admin/dashboard.html), embedded at build time: one
// HTML file with its script and style inline, nothing fetched from elsewhere.
std::string_view DashboardHtml();

}  // namespace aweft::admin
