// The diagnosis for people: the bottleneck with its figures, then one line per finding
// (severity, kind, what the evidence says, the transformations to try).
#pragma once

#include <string>

#include "diagnose/diagnosis.h"

namespace tf {

std::string formatDiagnosis(const Diagnosis& d, const std::string& indent);

}  // namespace tf
