import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `ListingExtractor` on every real sample (`Tests/Fixtures/wikitext`, copied from the shared data): templates,
/// Wikitravel tags (malformed ones too), nested templates, links, comments, field checks, categories and ids.
final class WikitextListingTests: KilnTestCase {
    /// The conventions `raw/itravel/kiln.json5` gives its listings source (French and German names).
    static var itravelConventions: ListingConventions {
        var conventions = ListingConventions()
        for (name, category) in ["voir": "see", "faire": "do", "acheter": "buy", "manger": "eat", "sortir": "drink", "se loger": "sleep"] {
            conventions.templates[name] = category
        }
        let french = ["nom": "name", "adresse": "address", "latitude": "lat", "longitude": "long", "direction": "directions",
                      "téléphone": "phone", "numéro gratuit": "tollfree", "horaire": "hours", "prix": "price",
                      "arrivée": "checkin", "départ": "checkout", "mise à jour": "lastedit"]
        conventions.parameters.merge(french) { _, new in new }
        conventions.types.merge(["restaurant": "eat", "landmark": "see", "alpine hut": "sleep", "hostel": "sleep"]) { _, new in new }
        for (heading, category) in ["Sehenswürdigkeiten": "see", "Küche": "eat", "Unterkunft": "sleep", "Voir": "see",
                                    "Manger": "eat", "Boire un verre / Sortir": "drink", "Se loger": "sleep"] {
            conventions.sections[TextFolding.fold(heading)] = category
        }
        conventions.inlineTemplates["prix"] = try? InlineTemplateFormat("{1} {2}")
        return conventions
    }

    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent("Tests/Fixtures/wikitext/\(name)"), encoding: .utf8)
    }

    static func samples() throws -> [String: Any] {
        let data = try Data(contentsOf: repositoryRoot.appendingPathComponent("Tests/Fixtures/wikitext/listing-samples.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func listings(_ text: String, title: String = "Page", conventions: ListingConventions = itravelConventions)
        throws -> (listings: [WikiListing], findings: [WikiFinding]) {
        var findings: [WikiFinding] = []
        let found = try ListingExtractor(conventions: conventions).listings(in: WikiPageScanner.scan(text), title: title, findings: &findings)
        return (found, findings)
    }

    private func named(_ name: String, in listings: [WikiListing]) throws -> WikiListing {
        try XCTUnwrap(listings.first { $0.fields["name"] == name }, "no listing named \(name)")
    }

    // MARK: - Wikivoyage samples

    func testCaseInsensitiveTemplateAndParameterNames() throws {
        let (found, findings) = try listings(try Self.fixture("case-insensitive-templates.wikicode"))
        XCTAssertEqual(findings, [])
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found[0].template, "listing")
        XCTAssertEqual(found[0].type, "do")
        XCTAssertEqual(found[0].category, "do")
        XCTAssertEqual(found[0].fields, ["name": "Черниговская областная филармония", "lat": "51.489534", "long": "31.303090"])
    }

    func testDeadLinkTemplateIsLeftOutOfTheURL() throws {
        let (found, findings) = try listings(try Self.fixture("dead-link.wikicode"))
        XCTAssertEqual(findings, [])
        XCTAssertEqual(found.map(\.fields), [[
            "name": "Elbjørn", "url": "http://www.isbryderen-elbjorn.dk", "email": "info@isbryderen-elbjorn.dk",
            "description": "Icebreaker now working as a restaurant and culture ship at the Aalborg harbour. It has a restaurant, a bar, glass workshop, and a museum.",
        ]])
        XCTAssertEqual(found[0].category, "see")
    }

    func testHTMLCommentInsideAValue() throws {
        let (found, findings) = try listings(try Self.fixture("html-comment.wikicode"))
        XCTAssertEqual(findings, [])
        let amber = try named("AMBER HOUSE - at the centre!", in: found)
        XCTAssertEqual(amber.category, "sleep")
        XCTAssertEqual(amber.fields["url"], "http://www.AmberHouse.co.nz")
        XCTAssertEqual(amber.fields["email"], "wikivoyage@AmberHouse.info")
        XCTAssertEqual(amber.fields["address"], "46 Weka St")
        XCTAssertEqual(amber.fields["lat"], "-41.26677")
        XCTAssertEqual(amber.fields["long"], "173.29322")
        XCTAssertEqual(amber.fields["phone"], "+64 3 539-0605, +64 21 202 4961 (Mobile)")
        XCTAssertEqual(amber.fields["fax"], "+44 7005 963 437 (fax server in Northern Ireland)")
        XCTAssertEqual(amber.fields["image"], "Amber_House,_Nelson,_New Zealand,_2005-11-16T01-33Z.jpg")
        XCTAssertEqual(amber.fields["price"], "$79-249")
        XCTAssertEqual(amber.fields["checkin"], "by arrangement, usually after 14:00")
        XCTAssertEqual(amber.fields["checkout"], "usually before 10:35")
        XCTAssertNil(amber.fields["tollfree"])
        XCTAssertNil(amber.fields["hours"])
        XCTAssertTrue(amber.fields["description"]?.hasPrefix("Open all year, clean Bed and Breakfast in a lovely 1897 villa that used to be a school for girls and little boys.") == true)
        XCTAssertTrue(amber.fields["description"]?.hasSuffix("(party of 4 from $37 each) The Amber family first came to Nelson in 1842 but can understand some French, Fukien Chinese, German, Malay and Spanish.") == true)
    }

    func testLinksInsideATemplateKeepTheirLabels() throws {
        let (found, _) = try listings(try Self.fixture("links-inside-template.wikicode"))
        let rows = try named("Торговые ряды", in: found)
        XCTAssertEqual(rows.category, "see")
        XCTAssertTrue(rows.fields["description"]?.contains("в духе Костромы или Галича, потом") == true, rows.fields["description"] ?? "")
        XCTAssertFalse(rows.fields["description"]?.contains("[[") == true)
    }

    func testUnknownTemplatesAreLeftOutAndNamed() throws {
        let (found, findings) = try listings(try Self.fixture("unknown-template.wikicode"))
        XCTAssertEqual(findings, [])
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found[0].fields["description"], "Description with some and another")
        XCTAssertEqual(found[0].unknownTemplates, ["unknown", "unknown"])
        XCTAssertEqual(found[0].category, "do")
    }

    func testGermanArticle() throws {
        let (found, findings) = try listings(try Self.fixture("sample-article-de.wikicode"), title: "Karwendel")
        XCTAssertEqual(findings, [])
        XCTAssertEqual(found.count, 69)
        XCTAssertEqual(Dictionary(grouping: found, by: { $0.category ?? "∅" }).mapValues(\.count), ["see": 20, "eat": 24, "sleep": 25])
        let pleisenspitze = try named("Pleisenspitze", in: found)
        XCTAssertEqual(pleisenspitze.template, "vcard")
        XCTAssertEqual(pleisenspitze.type, "landmark")
        XCTAssertEqual(pleisenspitze.line, 173)
        XCTAssertEqual(pleisenspitze.fields, [
            "name": "Pleisenspitze", "lat": "47.40950", "long": "11.34184",
            "description": "westlichster Gipfel in der mächtigen Karwendel-Hauptkette über dem Zusammenschluss des Karwendeltals mit dem Hinterautal.",
        ])
        let hut = try named("Hallerangeralm", in: found)
        XCTAssertEqual(hut.category, "eat")
        XCTAssertEqual(hut.fields, [
            "name": "Hallerangeralm", "alt": "Berggasthof", "directions": "am Isarursprung am Ende des Hinterautales",
            "url": "http://www.halleranger-alm.at/", "lat": "47.35661", "long": "11.47982",
            "phone": "(0)664 / 1055955 (Sommer); (0)5213 / 5119 (Winter)",
        ])
        let nordlinger = try named("Nördlinger Hütte", in: found)
        XCTAssertEqual(nordlinger.category, "sleep")
        XCTAssertEqual(nordlinger.fields["description"], "Höchstgelegene Hütte im Karwendel;")
        XCTAssertEqual(nordlinger.fields["hours"], "Ende Mai bis Anfang Oktober")
        // Type "tourist information" names no category: the nearest heading that does, Sehenswürdigkeiten, gives it.
        let naturpark = try named("Naturparkhaus Karwendel", in: found)
        XCTAssertEqual(naturpark.category, "see")
        XCTAssertEqual(naturpark.fields["description"], "2009 neu eröffnetes Informationszentrum des Tiroler Naturparks")
        XCTAssertEqual(naturpark.fields["address"], "Hinterriß 4, 6215 Hinterriß")
        // Two listings on one line: the first takes no trailing text, the second does.
        XCTAssertNil(try named("Seebergspitze", in: found).fields["description"])
        XCTAssertTrue(try named("Seekarspitze", in: found).fields["description"]?.hasPrefix("markieren den Bergkamm im Nordwesten") == true)
        // {{VCard}} written with a capital V is the same template.
        XCTAssertEqual(try named("Birkkarhütte", in: found).fields["lat"], "47.41174")
    }

    func testFrenchArticle() throws {
        let (found, findings) = try listings(try Self.fixture("sample-article-fr.wikicode"), title: "Thouars")
        XCTAssertEqual(found.count, 28)
        XCTAssertEqual(found.map { $0.category ?? "∅" }.reduce(into: [:]) { $0[$1, default: 0] += 1 },
                       ["see": 8, "do": 6, "buy": 1, "eat": 4, "drink": 4, "sleep": 3, "other": 2])
        let chateau = try named("Château des ducs de La Trémoille", in: found)
        XCTAssertEqual(chateau.template, "voir")
        XCTAssertEqual(chateau.fields, [
            "name": "Château des ducs de La Trémoille", "alt": "Collège Marie de la Tour d'Auvergne",
            "url": "http://etab.ac-poitiers.fr/coll-ta-thouars/", "address": "1 Place du Château", "lat": "46.9709", "long": "-0.2173",
            "image": "Thouars-château-tremoille-face-thouet.jpg", "phone": "+33 5 49 68 06 44", "price": "gratuit",
            "description": "Stratégiquement placé sur un promontoire naturel dominant un méandre de la rivière le Thouet, il a été construit en 1638. Le bâtiment principal sert de collège, il n'est pas visitable mais la vue de l'extérieur vaut quand même une visite. Profiter aussi de la chapelle, les écuries, l'orangerie qui a servi de prototype à celle de Versailles, et la vue surplombant la rivière.",
        ])
        XCTAssertEqual(try named("Ecomusée du Moulin de Crevant", in: found).fields["price"], "2 € à 4 €")
        XCTAssertEqual(try named("Le Trait D'Union", in: found).fields["description"], "Menu à 13 € le midi.")
        XCTAssertEqual(try named("Tour Porte au Prévost", in: found).fields["lastedit"], "2015/03/16")
        XCTAssertEqual(try named("Le Hoggar", in: found).category, "eat")
        XCTAssertEqual(try named("Office de tourisme", in: found).category, "other")
        // The theatre's url is a phone number: emptied and reported with its raw value.
        XCTAssertNil(try named("Théâtre de Thouars", in: found).fields["url"])
        XCTAssertEqual(try named("Théâtre de Thouars", in: found).fields["email"], "silvousplait@theatre-thouars.com")
        XCTAssertEqual(findings, [WikiFinding(code: "wikitext.url",
                                              message: "listing \"Théâtre de Thouars\": url \"http://05 49 66 24 24\" is not a web address; the field is left empty",
                                              line: 143)])
        XCTAssertEqual(found.flatMap(\.unknownTemplates), ["Horaire", "Horaire", "Horaire", "Horaire", "Horaire"])
    }

    // MARK: - Wikitravel samples

    func testEveryWikitravelTagSample() throws {
        let tags = try XCTUnwrap(Self.samples()["tags"] as? [String])
        let (found, findings) = try listings("== Eat ==\n" + tags.joined(separator: "\n"))
        XCTAssertEqual(found.count, 12)
        XCTAssertEqual(found.map { $0.fields["name"] ?? "∅" }, [
            "Al Forno Ristorante", "Andreas Stuben", "Antichi Sapori Romani", "Bräustüberl Zur Kanne",
            "Hotel Restaurant Goldener Adler", "Hotel Restaurant Schwarzer Bär", "Löwengarten Restaurant", "Mai Thai",
            "Steakhaus El Toro", "Silbermühle - vino y tapa Restaurant", "Jugendgästehaus Haus International München",
            "Hyatt Hotel and Casino Manila",
        ])
        XCTAssertEqual(found.map { $0.category ?? "∅" }, Array(repeating: "eat", count: 10) + ["sleep", "sleep"])
        XCTAssertEqual(try named("Bräustüberl Zur Kanne", in: found).fields, [
            "name": "Bräustüberl Zur Kanne", "address": "Bachgasse 15", "phone": "+49 9141 3844",
            "url": "http://schneider-bier.de/gaststaetten_02_kanne.php", "hours": "Tu-So 10.30–14.00 and 17.30–24.00",
            "description": "Original interior nearly untouched since 1890.",
        ])
        XCTAssertEqual(try named("Al Forno Ristorante", in: found).fields["url"], "www.blafasel.com")
        // Attributes over several lines.
        XCTAssertEqual(try named("Hyatt Hotel and Casino Manila", in: found).fields, [
            "name": "Hyatt Hotel and Casino Manila", "address": "1588 Pedro Gil Corner MH Del Pilar", "phone": "+63 2 245 1234",
            "email": "reservations.mn@hyatt.com", "url": "http://www.manila.casino.hyatt.com",
            "description": "5 star hotel with views of Manila Bay. Has a Casino and a spa.",
        ])
        // Junk after the start tag instead of a description.
        let hostel = try named("Jugendgästehaus Haus International München", in: found)
        XCTAssertNil(hostel.fields["description"])
        XCTAssertEqual(hostel.fields["price"], "EZ 49,00 €; DZ D/WC 39,00 €")
        XCTAssertEqual(findings.map(\.message),
                       ["<sleep> listing \"Jugendgästehaus Haus International München\": its description \"',\" holds no text; left out"])
        XCTAssertEqual(findings.map(\.line), [12])
    }

    func testEveryVCardSample() throws {
        let vcards = try XCTUnwrap(Self.samples()["vcards"] as? [String])
        let (found, findings) = try listings("== Küche ==\n" + vcards.map { "* " + $0 }.joined(separator: "\n"))
        XCTAssertEqual(findings, [])
        XCTAssertEqual(found.count, 13)
        XCTAssertEqual(found.map { $0.category ?? "∅" }, Array(repeating: "eat", count: 10) + ["sleep", "eat", "eat"])
        XCTAssertEqual(try named("Bräustüberl “Zur Kanne”", in: found).fields, [
            "name": "Bräustüberl “Zur Kanne”", "address": "Bachgasse 15, 91781 Weißenburg", "phone": "+49 (0)9141/3844",
            "url": "http://schneider-bier.de/gaststaetten_02_kanne.php",
            "hours": "Dienstag bis Sonntag von 10.30 – 14.00 und 17.30 – 24.00, Montag Ruhetag",
            "description": "dieser Gasthof könnte auch unter Sehenswürdigkeiten stehen, der Gastraum ist im Wesentlichem im Zustand von 1890.",
        ])
        XCTAssertEqual(try named("OHAYOU", in: found).fields, [
            "name": "OHAYOU", "url": "http://www.ohayou.de/", "address": "Belgradstr. 71, 80804 München",
            "directions": "\"Ecke\" Karl-Theodor-Str.", "lat": "48.16726", "long": "11.57360", "phone": "089 / 32667604",
            "hours": "Di. - Sa. 11.30 - 14.30, 17.30 - 23.00 Uhr; So. 17.00 - 22.00 Uhr",
            "description": "MVV: U3, Scheidplatz und Bonner Platz.",
        ])
        XCTAssertEqual(try named("Mai Thai", in: found).fields, ["name": "Mai Thai", "address": "Bismarckanlage 16, 91781 Weißenburg",
                                                                 "phone": "+49 (0)9141/995759"])
    }

    func testUntaggedProseHoldsNoListings() throws {
        let prose = try XCTUnwrap(Self.samples()["untaggeds"] as? [String])
        let (found, findings) = try listings("== See ==\n" + prose.map { "* " + $0 }.joined(separator: "\n"))
        XCTAssertEqual(found.count, 0)
        XCTAssertEqual(findings, [])
    }

    func testDalatPage() throws {
        let dalat = try XCTUnwrap(Self.samples()["dalat"] as? String)
        let (found, findings) = try listings(dalat, title: "Dalat")
        XCTAssertEqual(findings, [])
        XCTAssertEqual(found.count, 17)
        XCTAssertTrue(found.allSatisfy { $0.category == "see" && $0.section == 0 })
        XCTAssertEqual(try named("Crazy House", in: found).fields, [
            "name": "Crazy House", "url": "http://www.crazyhouse.vn/", "price": "35,000 dong",
            "address": "Huỳnh Thúc Kháng, Phường 4", "directions": "about 0.3 km off Duy Tan St",
            "description": "A striking, not-quite-finished fantasy house designed by the daughter of an independence war hero. Well worth a visit, even if you are not too much interested in architecture.",
        ])
        XCTAssertEqual(try named("Tuyen Lam Lake", in: found).fields["alt"], "Hồ Tuyền Lâm")
        XCTAssertEqual(try named("Crazy House", in: found).line, 4)
    }

    // MARK: - Malformed tags

    func testMalformedTagsAreRecovered() throws {
        let text = """
            == Sleep ==
            * <sleep name="Hotel A"junk address="1 Main St" phone=555-1234>Clean rooms.</sleep>
            * <sleep name="Hotel B" address="2 Main St>Quiet.</sleep>
            * <eat name='Café C' price="$5">Coffee and cake.
            * <eat name="Café D" ="x" alt>Tea.</eat>
            * <see name="Tower E" lat="48.1" long="11.5" />
            """
        let (found, findings) = try listings(text)
        XCTAssertEqual(found.map { $0.fields["name"] ?? "∅" }, ["Hotel A", "Hotel B", "Café C", "Café D", "Tower E"])
        guard found.count == 5 else { return }
        XCTAssertEqual(found[0].fields, ["name": "Hotel A", "address": "1 Main St", "phone": "555-1234", "description": "Clean rooms."])
        XCTAssertEqual(found[1].fields, ["name": "Hotel B", "address": "2 Main St", "description": "Quiet."])
        XCTAssertEqual(found[2].fields, ["name": "Café C", "price": "$5", "description": "Coffee and cake."])
        XCTAssertEqual(found[3].fields, ["name": "Café D", "description": "Tea."])
        XCTAssertEqual(found[4].fields, ["name": "Tower E", "lat": "48.1", "long": "11.5"])
        XCTAssertEqual(found.map(\.category), ["sleep", "sleep", "eat", "eat", "see"])
        XCTAssertEqual(findings.map(\.message), [
            "<sleep> listing \"Hotel A\": junk \"junk\" after the value of name; skipped",
            "<sleep> listing \"Hotel B\": the value of address has no closing quote; it ends at \">\"",
            "<eat> listing \"Café C\": no </eat> closes it; its description is the rest of the line",
            "<eat> listing \"Café D\": \"=\"x\"\" is not an attribute; skipped",
            "<eat> listing \"Café D\": attribute alt has no value; skipped",
        ])
        XCTAssertEqual(findings.map(\.line), [2, 3, 4, 5, 5])
        XCTAssertTrue(findings.allSatisfy { $0.code == "wikitext.tag" && $0.code.severity == .warning })
    }

    func testStartTagNeverClosed() throws {
        let (found, findings) = try listings("<see name=\"Lost\" address=\"Nowhere\"")
        XCTAssertEqual(found.map(\.fields), [["name": "Lost", "address": "Nowhere"]])
        XCTAssertEqual(findings.map(\.message), ["<see> listing \"Lost\": the start tag <see …> is never closed with \">\"; its attributes are kept"])
    }

    // MARK: - Nesting, fields, categories, ids

    func testNestedTemplatesInValues() throws {
        let text = "{{see|name=A {{lang|fr|Tour}}|price={{Prix|2|€}} à {{Prix|4|€}}|content=Open {{Horaire|||9||12|}} daily {{citation needed}}.}}"
        var conventions = Self.itravelConventions
        conventions.ignoredTemplates = ["citation needed"]
        let (found, findings) = try listings(text, conventions: conventions)
        XCTAssertEqual(findings, [])
        XCTAssertEqual(found.first?.fields, ["name": "A Tour", "price": "2 € à 4 €", "description": "Open daily ."])
        XCTAssertEqual(found.first?.unknownTemplates, ["Horaire"])
    }

    func testCoordinateChecks() throws {
        let text = """
            == See ==
            * {{see | name=A | lat=47,5 | long=+11.25}}
            * {{see | name=B | lat={{#invoke:Coordinates|lat|Q1}} | long=47°24′N}}
            * {{see | name=C | lat=91 | long=-181.5}}
            * {{see | name=D | lat= | long= | url=example.org/path | email=mailto:a@b.org}}
            * {{see | name=E | url=http://a b | email=nobody}}
            """
        let (found, findings) = try listings(text)
        XCTAssertEqual(found.map(\.fields), [
            ["name": "A", "lat": "47.5", "long": "11.25"], ["name": "B"], ["name": "C"],
            ["name": "D", "url": "example.org/path", "email": "a@b.org"], ["name": "E"],
        ])
        XCTAssertEqual(findings.map { "\($0.line) \($0.code.severity.rawValue) \($0.code): \($0.message)" }, [
            "3 info wikitext.coordinates: listing \"B\": lat \"{{#invoke:Coordinates|lat|Q1}}\" is not a number of degrees; left out of its coordinates",
            "3 info wikitext.coordinates: listing \"B\": long \"47°24′N\" is not a number of degrees; left out of its coordinates",
            "4 warning wikitext.coordinates-range: listing \"C\": lat 91 is outside -90…90; the field is left empty",
            "4 warning wikitext.coordinates-range: listing \"C\": long -181.5 is outside -180…180; the field is left empty",
            "6 warning wikitext.url: listing \"E\": url \"http://a b\" is not a web address; the field is left empty",
            "6 warning wikitext.email: listing \"E\": email \"nobody\" is not an e-mail address; the field is left empty",
        ])
    }

    func testCategoryFromTemplateTypeSectionOrDefault() throws {
        let text = """
            {{listing | name=Lead}}
            == Eat ==
            * {{listing | name=Generic}}
            * {{listing | name=Typed | type=see}}
            * {{drink | name=Templated}}
            === Old town ===
            * {{vCard | name=Nested | type=unknown kind}}
            == Get around ==
            * {{marker | name=Station}}
            """
        let (found, _) = try listings(text)
        XCTAssertEqual(found.map { "\($0.fields["name"]!)=\($0.category ?? "∅")@\($0.section)" },
                       ["Lead=other@0", "Generic=eat@1", "Typed=see@1", "Templated=drink@1", "Nested=eat@2", "Station=other@3"])
        var conventions = Self.itravelConventions
        conventions.defaultCategory = nil
        XCTAssertNil(try listings(text, conventions: conventions).listings.last?.category)
    }

    func testIdsAreStableAndDuplicatesGetOrdinals() throws {
        let text = """
            == Eat ==
            * {{eat | name=Gray's Papaya | address=2090 Broadway}}
            * {{eat | name=Gray's Papaya | address=539 8th Ave}}
            * {{eat | content=no name}}
            * {{eat | content=no name either}}
            == Drink ==
            * {{drink | name=Gray's Papaya}}
            """
        let (found, _) = try listings(text, title: "Upper West Side")
        XCTAssertEqual(found.map(\.ordinal), [0, 1, 0, 1, 0])
        XCTAssertEqual(Set(found.map(\.id)).count, 5)
        XCTAssertEqual(found[0].id, StableListingID.make(page: "Upper West Side", path: ["Eat"], name: "Gray's Papaya", ordinal: 0))
        XCTAssertTrue(found.allSatisfy { $0.id > 0 && $0.id < 1 << 52 })
        // The same page read again gives the same ids; another page gives others.
        XCTAssertEqual(try listings(text, title: "Upper West Side").listings.map(\.id), found.map(\.id))
        XCTAssertNotEqual(try listings(text, title: "Midtown").listings.map(\.id)[0], found[0].id)
        // Adding a listing before them changes no id.
        let (more, _) = try listings(text.replacingOccurrences(of: "== Eat ==\n", with: "== Eat ==\n* {{eat | name=Zabar's}}\n"), title: "Upper West Side")
        XCTAssertEqual(Array(more.map(\.id).dropFirst()), found.map(\.id))
    }

    func testSummaryOfAPagesListings() throws {
        let (found, _) = try listings("{{see|name=A|lat=1|long=10}}{{see|name=B|lat=3|long=30}}{{see|name=C|lat=2}}{{see|name=D|lat=100|long=20}}{{see|name=E|lat=2.5|long=-5}}")
        XCTAssertEqual(ListingSummary(found), ListingSummary(count: 5, placed: 3, medianLatitude: "2.5", medianLongitude: "10"))
        XCTAssertEqual(ListingSummary([]), ListingSummary(count: 0, placed: 0, medianLatitude: nil, medianLongitude: nil))
        XCTAssertEqual(ListingSummary.median([4, 1, 3, 2]), 2.5)
    }

    func testHostilePagesStayLinear() throws {
        // Each would take minutes if every unclosed construct were looked for to the end of the page. The fast tier's
        // pages are a fifth as long.
        let k = TestTier.size(5, fast: 1)
        let pages = [String(repeating: "{{a ", count: 4_000 * k), String(repeating: "* <see name=\"x\">y\n", count: 1_000 * k),
                     "{{see|content=" + String(repeating: "[[a|b ", count: 4_000 * k) + "}}", String(repeating: "<see ", count: 4_000 * k),
                     String(repeating: "{{", count: 6_000 * k) + String(repeating: "}}", count: 6_000 * k),
                     String(repeating: "<see a='x' ", count: 1_000 * k), String(repeating: "<see name=\"", count: 4_000 * k)]
            + ["<a ", "[http://x ", "<ref>", "[[File:x|", "&amp", "<!--"].map { "{{see|content=" + String(repeating: $0, count: 4_000 * k) + "}}" }
        let start = Date()
        for page in pages { _ = try listings(page) }
        XCTAssertLessThan(Date().timeIntervalSince(start), 30)
        XCTAssertEqual(try listings(String(repeating: "* <see name=\"x\">y\n", count: 3)).listings.map { $0.fields["description"] }, ["y", "y", "y"])
    }

    func testUnclosedTemplateIsReportedAndTheRestRead() throws {
        let page = WikiPageScanner.scan("* {{see | name=Broken\n* {{see | name=Fine}}\n")
        XCTAssertEqual(page.unclosedTemplates.map(\.line), [1])
        XCTAssertEqual(page.unclosedTemplates.map(\.name), ["see"])
        var findings: [WikiFinding] = []
        let found = try ListingExtractor(conventions: ListingConventions()).listings(in: page, title: "P", findings: &findings)
        XCTAssertEqual(found.map { $0.fields["name"] }, ["Fine"])
    }
}
