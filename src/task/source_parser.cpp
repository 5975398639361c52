#include "task/source_parser.h"

#include <fmt/format.h>

#include "kernel/module_normalize.h"
#include "util/error.h"

namespace tf {

ParsedSource parseSource(WorkerClient& worker, const std::filesystem::path& path, std::string text) {
  ParseReply reply = worker.parse(text, path.string());
  if (reply.syntaxError()) {
    if (reply.line > 0) {
      throw UserError(fmt::format("{}:{}:{}: syntax error: {}", path.string(), reply.line, reply.col, reply.message));
    }
    throw UserError(fmt::format("{}: cannot parse: {}", path.string(), reply.message));
  }
  if (!reply.ok()) {
    throw EnvironmentError(fmt::format("cannot parse {}: {}{}", path.string(), reply.message,
                                       reply.detail.empty() ? "" : " (" + reply.detail + ")"));
  }
  ParsedSource out;
  out.path = path;
  out.source = SourceText(std::move(text));
  out.ast = std::move(reply.ast);
  normalizeModule(out.ast);
  return out;
}

ParsedSource parseSource(WorkerProcess& worker, const std::filesystem::path& path, std::string text) {
  WorkerClient client(worker);
  return parseSource(client, path, std::move(text));
}

ParsedSource parseFile(WorkerProcess& worker, const std::filesystem::path& path, std::string_view what) {
  return parseSource(worker, path, readSourceFile(path, what));
}

}  // namespace tf
