import KilnC

/// Easter Sunday of the Orthodox churches (the Julian computus, on the Gregorian calendar), which moves Greek public
/// holidays such as Clean Monday, Good Friday, Easter Monday and Whit Monday.
package enum OrthodoxEaster {
    /// Easter Sunday of `year` on the Gregorian calendar, as year, month and day; `nil` outside 1583…4099, where the
    /// Julian–Gregorian difference used here is exact.
    package static func date(year: Int) -> (year: Int, month: Int, day: Int)? {
        guard (1583...4099).contains(year) else { return nil }
        // Meeus's Julian algorithm: the date of Easter on the Julian calendar.
        let a = year % 4, b = year % 7, c = year % 19
        let d = (19 * c + 15) % 30
        let e = (2 * a + 4 * b - d + 34) % 7
        let month = (d + e + 114) / 31, day = (d + e + 114) % 31 + 1
        // The Julian calendar lags the Gregorian by 10 days in 1583, one more for each century year not divisible by 400.
        let century = year / 100
        let lag = century - century / 4 - 2
        return addingDays(lag, to: (year, month, day))
    }

    /// Easter as `YYYY-MM-DD`, the form SQLite's date functions read.
    package static func isoDate(year: Int) -> String? {
        guard let easter = date(year: year) else { return nil }
        func two(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return "\(easter.year)-\(two(easter.month))-\(two(easter.day))"
    }

    private static func addingDays(_ days: Int, to date: (Int, Int, Int)) -> (year: Int, month: Int, day: Int) {
        var (year, month, day) = date
        day += days
        while true {
            let length = [31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            if day <= length { return (year, month, day) }
            day -= length
            month += 1
            if month > 12 { month = 1; year += 1 }
        }
    }
}
