import KilnC
import KilnCore
import KilnManifest

/// MediaWiki's parser functions and magic words: `{{#if:…}}`, `{{PAGENAME}}`, `{{DEFAULTSORT:…}}`, `{{lc:…}}`. They
/// are no template and hold no listing text, so they are left out without a finding. Anything else, whatever its
/// case (`{{IATA|BOS}}`, `{{USD|20}}`), is a template and is reported when it is not declared.
package enum WikiMagicWords {
    /// Variables, written in capitals and used without a colon (`{{PAGENAME}}`, `{{CURRENTYEAR}}`).
    package static let variables: Set<String> = [
        "PAGENAME", "PAGENAMEE", "FULLPAGENAME", "FULLPAGENAMEE", "BASEPAGENAME", "BASEPAGENAMEE", "ROOTPAGENAME",
        "ROOTPAGENAMEE", "SUBPAGENAME", "SUBPAGENAMEE", "TALKPAGENAME", "TALKPAGENAMEE", "SUBJECTPAGENAME",
        "SUBJECTPAGENAMEE", "ARTICLEPAGENAME", "ARTICLEPAGENAMEE", "NAMESPACE", "NAMESPACEE", "NAMESPACENUMBER",
        "TALKSPACE", "TALKSPACEE", "SUBJECTSPACE", "SUBJECTSPACEE", "ARTICLESPACE", "ARTICLESPACEE", "PAGEID",
        "PAGELANGUAGE", "SITENAME", "SERVER", "SERVERNAME", "SCRIPTPATH", "STYLEPATH", "CONTENTLANGUAGE",
        "CONTENTLANG", "DIRMARK", "DIRECTIONMARK", "CURRENTVERSION", "CURRENTYEAR", "CURRENTMONTH", "CURRENTMONTH1",
        "CURRENTMONTH2", "CURRENTMONTHNAME", "CURRENTMONTHNAMEGEN", "CURRENTMONTHABBREV", "CURRENTDAY", "CURRENTDAY2",
        "CURRENTDOW", "CURRENTDAYNAME", "CURRENTTIME", "CURRENTHOUR", "CURRENTWEEK", "CURRENTTIMESTAMP", "LOCALYEAR",
        "LOCALMONTH", "LOCALMONTH1", "LOCALMONTH2", "LOCALMONTHNAME", "LOCALMONTHNAMEGEN", "LOCALMONTHABBREV",
        "LOCALDAY", "LOCALDAY2", "LOCALDOW", "LOCALDAYNAME", "LOCALTIME", "LOCALHOUR", "LOCALWEEK", "LOCALTIMESTAMP",
        "REVISIONID", "REVISIONDAY", "REVISIONDAY2", "REVISIONMONTH", "REVISIONMONTH1", "REVISIONYEAR",
        "REVISIONTIMESTAMP", "REVISIONUSER", "REVISIONSIZE", "NUMBEROFPAGES", "NUMBEROFARTICLES", "NUMBEROFFILES",
        "NUMBEROFEDITS", "NUMBEROFUSERS", "NUMBEROFADMINS", "NUMBEROFACTIVEUSERS", "NUMBEROFVIEWS", "NOTOC",
        "FORCETOC", "TOC", "NOEDITSECTION", "NEWSECTIONLINK", "NONEWSECTIONLINK", "NOGALLERY", "HIDDENCAT",
        "NOINDEX", "INDEX", "STATICREDIRECT", "NOTITLECONVERT", "NOCONTENTCONVERT", "!", "=",
    ]

    /// Parser functions written `{{name:argument}}`, compared ignoring case.
    package static let functions: Set<String> = [
        "lc", "lcfirst", "uc", "ucfirst", "formatnum", "formatdate", "dateformat", "padleft", "padright", "plural",
        "grammar", "gender", "int", "ns", "nse", "urlencode", "anchorencode", "fullurl", "fullurle", "localurl",
        "localurle", "canonicalurl", "canonicalurle", "filepath", "tag", "subst", "safesubst", "msg", "msgnw", "raw",
        "defaultsort", "defaultsortkey", "defaultcategorysort", "displaytitle", "pagesincategory", "pagesincat",
        "pagesize", "protectionlevel", "protectionexpiry", "cascadingsources", "numberingroup", "numberinrole",
        "bidi", "language", "special", "speciale", "noexternallanglinks", "pagename", "pagenamee", "fullpagename",
        "fullpagenamee", "basepagename", "rootpagename", "subpagename", "talkpagename", "subjectpagename",
        "namespace", "namespacee", "namespacenumber", "pageid", "revisionid", "revisionuser", "revisiontimestamp",
        "numberofpages", "numberofarticles", "numberoffiles", "numberofedits", "numberofusers", "numberofadmins",
        "numberofactiveusers", "localurl", "server", "invoke", "property", "statements",
    ]

    /// True for a parser function (`#`-prefixed, a known `name:` function, or any `NAME:` in capitals) or a magic
    /// word of the list, given the name as written (trimmed, the argument after `:` included).
    package static func contains(_ name: String) -> Bool {
        if name.hasPrefix("#") { return true }
        guard let colon = name.firstIndex(of: ":") else { return variables.contains(name) }
        let word = name[..<colon].trimmingCharacters(in: .whitespaces)
        guard !word.isEmpty else { return false }
        return functions.contains(word.lowercased()) || variables.contains(word)
            || (word.contains { $0.isUppercase } && word.allSatisfy { ($0.isASCII && $0.isUppercase) || $0.isASCIIDigitCharacter })
    }
}
