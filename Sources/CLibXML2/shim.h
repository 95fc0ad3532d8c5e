#include <libxml/xmlversion.h>
/* Debian builds libxml2 with ICU; its ICU headers clash with the copy inside Foundation ("UErrorCode has different
   definitions"). Kiln never touches the ICU members (they sit at the end of xmlCharEncodingHandler, used only
   through pointers), so they are left out of what Swift sees. */
#undef LIBXML_ICU_ENABLED
#include <libxml/encoding.h>
#include <libxml/tree.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlreader.h>
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

/* xmlFree is a global function pointer and xmlGenericErrorFunc is variadic: Swift can call neither directly. */
static inline void kiln_xml_free(void *pointer) { xmlFree(pointer); }

static void kiln_xml_ignore(void *context, const char *message, ...) { (void)context; (void)message; }

/* Stops libxml2 from printing to stderr: every error Kiln cares about arrives through a structured handler.
   The handlers are per thread; the xmlThrDef* defaults are what threads started later (Kiln's readers) begin with. */
static inline void kiln_xml_silence(void) {
    xmlThrDefSetGenericErrorFunc(NULL, kiln_xml_ignore);
    xmlThrDefSetStructuredErrorFunc(NULL, NULL);
    xmlSetGenericErrorFunc(NULL, kiln_xml_ignore);
    xmlSetStructuredErrorFunc(NULL, NULL);
}

/* Refuses every external entity and DTD: nothing is ever read from a path or URL a document names. */
static xmlParserInputPtr kiln_xml_refuse_entity(const char *url, const char *id, xmlParserCtxtPtr context) {
    (void)url; (void)id; (void)context;
    return NULL;
}

static inline void kiln_xml_refuse_external_entities(void) {
    xmlSetExternalEntityLoader(kiln_xml_refuse_entity);
}
