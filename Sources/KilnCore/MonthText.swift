import KilnC

/// Months as Czech field guides write them: month names in any grammatical case (`červen`, `června`, `v červnu`,
/// `červnem`; `červenec`, `července`… — whole words, so June is never read out of July), Roman numerals in capitals
/// (`VI`, `XI.`), numbers 1–12, joined into a range by a dash or words (`VI–X`, `od června do září`, `květen až
/// říjen`); a range may wrap the year (`XI–II` is November to February). `celoročně` is the whole year.
package enum MonthText {
    /// A season: the first and last month (1–12); `from` greater than `to` wraps the year.
    package struct Season: Equatable, Sendable {
        package var from: Int
        package var to: Int
    }

    /// The folded forms of each month's name: nominative, genitive, dative/locative, instrumental.
    package static let forms: [String: Int] = {
        let names: [[String]] = [
            ["leden", "ledna", "lednu", "lednem"],
            ["unor", "unora", "unoru", "unorem"],
            ["brezen", "brezna", "breznu", "breznem"],
            ["duben", "dubna", "dubnu", "dubnem"],
            ["kveten", "kvetna", "kvetnu", "kvetnem"],
            ["cerven", "cervna", "cervnu", "cervnem"],
            ["cervenec", "cervence", "cervenci", "cervencem"],
            ["srpen", "srpna", "srpnu", "srpnem"],
            ["zari", "zarim"],
            ["rijen", "rijna", "rijnu", "rijnem"],
            ["listopad", "listopadu", "listopadem"],
            ["prosinec", "prosince", "prosinci", "prosincem"],
        ]
        var forms: [String: Int] = [:]
        for (index, words) in names.enumerated() { for word in words { forms[word] = index + 1 } }
        return forms
    }()

    package static let romanNumerals = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]

    /// Words around months that carry no month (folded): prepositions, "až", "the beginning/end of".
    package static let fillers: Set<String> = ["od", "do", "az", "v", "ve", "a", "i", "po", "pres", "zacatek", "zacatkem",
                                       "zacatku", "pocatkem", "konec", "koncem", "konce", "polovina", "poloviny",
                                       "polovinou", "mesic", "mesice", "mesicu", "hlavne", "nejcasteji", "obcas", "rosti",
                                       "roste", "plodnice", "plodi", "vetsinou", "casto"]

    /// Whole-year words (folded).
    package static let wholeYear: Set<String> = ["celorocne", "celorocni"]

    /// The months `text` names, in order.
    /// - Throws: `ValueProblem` naming the first word that is neither a month nor a word that goes with months.
    package static func months(in text: String) throws -> [Int] {
        var months: [Int] = []
        let all = words(of: text)
        for (index, word) in all.enumerated() {
            let nextIsName = index + 1 < all.count && forms[TextFolding.fold(all[index + 1])] != nil
            if word == "V" && nextIsName { continue }   // "V červnu" at the start of a sentence: the preposition
            if let roman = romanNumerals.firstIndex(of: word) {
                months.append(roman + 1)
                continue
            }
            if word.allSatisfy(\.isASCIIDigitCharacter), let number = Int(word), (1...12).contains(number) {
                months.append(number)
                continue
            }
            let folded = TextFolding.fold(word)
            if let month = forms[folded] {
                months.append(month)
            } else if wholeYear.contains(folded) {
                months += [1, 12]
            } else if !fillers.contains(folded) {
                throw ValueProblem(message: "\"\(excerpt(text))\" is not a month or a range of months: \"\(word)\" is neither "
                                       + "a Czech month name, a Roman numeral (I–XII) nor a number 1–12", code: .valueMonth)
            }
        }
        return months
    }

    /// The one month `text` names.
    /// - Throws: `ValueProblem` when it names none, several, or something else.
    package static func month(_ text: String) throws -> Int {
        let found = try months(in: text)
        guard found.count == 1 else {
            throw ValueProblem(message: "\"\(excerpt(text))\" names \(found.isEmpty ? "no month" : "\(found.count) months"); expected one",
                               code: .valueMonth)
        }
        return found[0]
    }

    /// The season `text` names: one month (from and to alike) or two (a range).
    /// - Throws: `ValueProblem` when it names none, more than two, or something else.
    package static func season(_ text: String) throws -> Season {
        let found = try months(in: text)
        switch found.count {
        case 1: return Season(from: found[0], to: found[0])
        case 2: return Season(from: found[0], to: found[1])
        default:
            throw ValueProblem(message: "\"\(excerpt(text))\" names \(found.isEmpty ? "no month" : "\(found.count) months"); "
                                   + "expected a month or a range such as VI–X or \"od června do září\"", code: .valueMonth)
        }
    }

    /// The words of `text`: runs of letters or digits (dashes, dots, commas and spaces separate them).
    private static func words(of text: String) -> [String] {
        text.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init)
    }
}
