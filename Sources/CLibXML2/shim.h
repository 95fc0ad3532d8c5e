#include <libxml/xmlversion.h>
/* Debian builds libxml2 with ICU; its ICU headers clash with the copy inside Foundation ("UErrorCode has different
   definitions"). Kiln never touches the ICU members (they sit at the end of xmlCharEncodingHandler, used only
   through pointers), so they are left out of what Swift sees. */
#undef LIBXML_ICU_ENABLED
#include <libxml/encoding.h>
#include <libxml/tree.h>
#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
