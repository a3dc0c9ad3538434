// Kubernetes resource quantities (`resource.Quantity` text) as integers, for
// the gang doctor's fit arithmetic: "500m", "2", "1.5", "2Gi", "1k", "1e3",
// "128974848", "12e6", "-1".
//
// A quantity is held in milli-units (an int64), the unit kube-scheduler's
// noderesources plugin compares CPU in, and exact for every other resource
// that fits: 1 = 1000, 500m = 500, 2Gi = 2147483648000. Values below one
// milli-unit round up (kube's MilliValue rounds up too), so "1u" is 1.
//
// Pure functions; thread-safe.
#ifndef WASD_OBJECTS_QUANTITY_H_
#define WASD_OBJECTS_QUANTITY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wasd::objects {

// The value of `text` in milli-units; nullopt when `text` is not a quantity
// (empty, a stray character, an unknown suffix, a suffix and an exponent
// together, more than 30 digits) or its milli-value does not fit in an int64
// (above about 9.2e15 units, e.g. "9Ei").
std::optional<std::int64_t> ParseQuantityMilli(std::string_view text);

// A milli-value for people, in the resource's own units: "500m", "2", "3"
// for counts and CPU; memory-like resources ("memory", "ephemeral-storage",
// "hugepages-*") with the largest binary suffix that divides them exactly
// ("2Gi", "1536Mi"); a fraction of a unit is printed in milli-units
// ("1500m") whatever the resource.
std::string FormatQuantityMilli(std::string_view resource, std::int64_t milli);

}  // namespace wasd::objects

#endif  // WASD_OBJECTS_QUANTITY_H_
