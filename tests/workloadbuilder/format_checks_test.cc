#include <catch2/catch.hpp>

#include "workloadbuilder/validate.h"

namespace wb = wasd::workloadbuilder;

namespace {
const std::string kLabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const std::string kSubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const std::string kNamePart =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
using Msgs = std::vector<std::string>;
}  // namespace

TEST_CASE("IsDNS1123Label", "[unit]") {
  CHECK(wb::IsDNS1123Label("gpu-pool").empty());
  CHECK(wb::IsDNS1123Label("a").empty());
  CHECK(wb::IsDNS1123Label("123-abc").empty());
  CHECK(wb::IsDNS1123Label(std::string(63, 'a')).empty());
  CHECK(wb::IsDNS1123Label("a.b") == Msgs{"must not contain dots"});
  CHECK(wb::IsDNS1123Label("GPU") == Msgs{kLabelMessage});
  CHECK(wb::IsDNS1123Label("") == Msgs{kLabelMessage});
  CHECK(wb::IsDNS1123Label("-a") == Msgs{kLabelMessage});
  CHECK(wb::IsDNS1123Label("a-") == Msgs{kLabelMessage});
  CHECK(wb::IsDNS1123Label(std::string(64, 'a')) == Msgs{"must be no more than 63 bytes"});
  CHECK(wb::IsDNS1123Label(std::string(64, 'A')) ==
        Msgs{"must be no more than 63 bytes", kLabelMessage});
}

TEST_CASE("IsDNS1123Label golden: two spaces before 'or'", "[unit]") {
  const Msgs m = wb::IsDNS1123Label("Bad_Name");
  REQUIRE(m.size() == 1);
  CHECK(m[0].find("(e.g. 'my-name',  or '123-abc', regex") != std::string::npos);
}

TEST_CASE("IsDNS1123Subdomain", "[unit]") {
  CHECK(wb::IsDNS1123Subdomain("example.com").empty());
  CHECK(wb::IsDNS1123Subdomain("gpu-template").empty());
  CHECK(wb::IsDNS1123Subdomain(std::string(253, 'a')).empty());
  CHECK(wb::IsDNS1123Subdomain("a..b") == Msgs{kSubdomainMessage});
  CHECK(wb::IsDNS1123Subdomain(".a") == Msgs{kSubdomainMessage});
  CHECK(wb::IsDNS1123Subdomain("a.") == Msgs{kSubdomainMessage});
  CHECK(wb::IsDNS1123Subdomain("Example.com") == Msgs{kSubdomainMessage});
  CHECK(wb::IsDNS1123Subdomain("") == Msgs{kSubdomainMessage});
  CHECK(wb::IsDNS1123Subdomain(std::string(254, 'a')) == Msgs{"must be no more than 253 bytes"});
}

TEST_CASE("IsQualifiedName (label keys)", "[unit]") {
  CHECK(wb::IsQualifiedName("topology.kubernetes.io/zone").empty());
  CHECK(wb::IsQualifiedName("MyName").empty());
  CHECK(wb::IsQualifiedName("my_name.x-1").empty());
  CHECK(wb::IsQualifiedName("a/b").empty());
  CHECK(wb::IsQualifiedName("bad key") == Msgs{kNamePart});
  CHECK(wb::IsQualifiedName("-x") == Msgs{kNamePart});
  CHECK(wb::IsQualifiedName("/x") == Msgs{"prefix part must be non-empty"});
  CHECK(wb::IsQualifiedName("x/") == Msgs{"name part must be non-empty", kNamePart});
  CHECK(wb::IsQualifiedName("Example.com/x") == Msgs{"prefix part " + kSubdomainMessage});
  CHECK(wb::IsQualifiedName(std::string(64, 'a')) ==
        Msgs{"name part must be no more than 63 bytes"});
  const Msgs three = wb::IsQualifiedName("a/b/c");
  REQUIRE(three.size() == 1);
  CHECK(three[0].rfind("a qualified name must consist of", 0) == 0);
  CHECK(
      three[0].find("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')") !=
      std::string::npos);
}
