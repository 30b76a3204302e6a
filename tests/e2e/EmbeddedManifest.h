//===- EmbeddedManifest.h - the manifest a compiled model carries --------===//

#ifndef TFC_TESTS_E2E_EMBEDDEDMANIFEST_H
#define TFC_TESTS_E2E_EMBEDDEDMANIFEST_H

#include "runtime/Manifest.h"
#include "tests/e2e/Command.h"

#include <string>

namespace tfc::e2e {

/// The manifest `binary` embeds (tfc_manifest: NUL-terminated JSON, its keys
/// sorted, so it opens with "batch" and holds "entries"), parsed as the
/// runtime parses it.
inline bool readManifest(const std::string &binary, rt::Manifest &manifest, std::string &error) {
  std::string bytes = fileBytes(binary);
  size_t key = bytes.find("\"entries\":[");
  size_t begin = key == std::string::npos ? key : bytes.rfind("{\"batch\":", key);
  if (begin == std::string::npos) {
    error = "no manifest in " + binary;
    return false;
  }
  size_t end = bytes.find('\0', key);
  return rt::parseManifest(bytes.substr(begin, end - begin).c_str(), manifest, error);
}

} // namespace tfc::e2e

#endif // TFC_TESTS_E2E_EMBEDDEDMANIFEST_H
