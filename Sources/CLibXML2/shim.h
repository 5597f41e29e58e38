#include <libxml/xmlversion.h>
// libxml2's encoding.h includes ICU's headers when libxml2 was built with ICU; they clash with the ICU
// copy Foundation ships. Sluice only uses the push parser through opaque pointers (never the encoding
// handler structs whose layout this changes), so the ICU part is left out.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlwriter.h>
