import Foundation

/// HTTP dates (`Date`, `Expires`, `Last-Modified`…), which the cache reads to compute ages and
/// freshness: RFC 9110 §5.6.7. Parsed byte by byte, without `DateFormatter` (slow and
/// locale-dependent), to whole seconds since 1970 in UTC.
///
/// Accepted, after optional whitespace around the value is removed:
/// - IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`;
/// - the obsolete RFC 850 form `Sunday, 06-Nov-94 08:49:37 GMT`, whose two-digit year is the
///   year with those last two digits that is at most 50 years after the current year (§5.6.7:
///   one that appears more than 50 years in the future is the most recent past year instead);
/// - the obsolete asctime form `Sun Nov  6 08:49:37 1994` (a one-digit day after two spaces, or
///   two digits).
///
/// Day and month names and `GMT` are matched case-insensitively (§5.6.7 asks recipients to be
/// robust); the day name must be a real one of the right length for its form but is not checked
/// against the date. Every number must have exactly its digits; the day must exist in its month
/// (leap years of the Gregorian calendar); hours 00–23, minutes 00–59, seconds 00–60 (a leap
/// second, counted as the next second). Anything else gives nil: a cache must treat an invalid
/// `Expires` as a time in the past (RFC 9111 §5.3), which is the freshness code's business.
enum HTTPDate {
    /// 0000-01-01T00:00:00Z, the earliest time a four-digit year can write.
    static let earliest: Int64 = daysSince1970(year: 0, month: 1, day: 1) * 86_400
    /// 9999-12-31T23:59:59Z, the latest.
    static let latest: Int64 = daysSince1970(year: 9999, month: 12, day: 31) * 86_400 + 86_399

    /// Seconds since 1970 of an HTTP date, or nil if it is not one. `now` settles the century of
    /// an RFC 850 date.
    static func parse(_ text: String, now: Date = Date()) -> Int64? {
        var text = text
        return text.withUTF8 { parse(bytes: $0, now: now) }
    }

    /// The `Date` of an HTTP date, or nil if it is not one.
    static func date(from text: String, now: Date = Date()) -> Date? {
        parse(text, now: now).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// `date` as an IMF-fixdate, with the fraction of a second dropped; dates before year 0 or
    /// after 9999 are written as the earliest or latest time.
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let seconds: Int64
        if interval.isNaN {
            seconds = 0
        } else {
            seconds = Int64(min(max(interval.rounded(.down), Double(earliest)), Double(latest)))
        }
        return format(secondsSince1970: seconds)
    }

    /// Seconds since 1970 as an IMF-fixdate, clamped to years 0–9999.
    static func format(secondsSince1970: Int64) -> String {
        let seconds = min(max(secondsSince1970, earliest), latest)
        let days = floorDivide(seconds, 86_400)
        let timeOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(daysSince1970: days)
        let weekday = Int(floorModulo(days + 4, 7))  // 1970-01-01 was a Thursday
        var out = ""
        out.reserveCapacity(29)
        out += shortDayNames[weekday]
        out += ", "
        out += twoDigits(day)
        out += " "
        out += monthNames[month - 1]
        out += " "
        out += twoDigits(year / 100) + twoDigits(year % 100)
        out += " "
        out += twoDigits(timeOfDay / 3600) + ":" + twoDigits(timeOfDay / 60 % 60) + ":" + twoDigits(timeOfDay % 60)
        out += " GMT"
        return out
    }

    // MARK: Parsing

    private static let shortDayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    /// What follows the three letters of each day name (Sunday first) in RFC 850 dates, lowercased.
    private static let longDayNameEndings: [StaticString] = ["day", "day", "sday", "nesday", "rsday", "day", "urday"]
    /// `gmt` as ``Scanner/threeLetters()`` packs it.
    private static let gmt: UInt32 = 0x67_6D_74

    /// The weekday (0 for Sunday) of three lowercased letters packed as ``Scanner/threeLetters()`` does.
    private static func weekday(of code: UInt32) -> Int? {
        switch code {
        case 0x73_75_6E: 0  // sun
        case 0x6D_6F_6E: 1  // mon
        case 0x74_75_65: 2  // tue
        case 0x77_65_64: 3  // wed
        case 0x74_68_75: 4  // thu
        case 0x66_72_69: 5  // fri
        case 0x73_61_74: 6  // sat
        default: nil
        }
    }

    /// The month (0 for January) of three lowercased letters packed as ``Scanner/threeLetters()`` does.
    private static func month(of code: UInt32) -> Int? {
        switch code {
        case 0x6A_61_6E: 0   // jan
        case 0x66_65_62: 1   // feb
        case 0x6D_61_72: 2   // mar
        case 0x61_70_72: 3   // apr
        case 0x6D_61_79: 4   // may
        case 0x6A_75_6E: 5   // jun
        case 0x6A_75_6C: 6   // jul
        case 0x61_75_67: 7   // aug
        case 0x73_65_70: 8   // sep
        case 0x6F_63_74: 9   // oct
        case 0x6E_6F_76: 10  // nov
        case 0x64_65_63: 11  // dec
        default: nil
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index: Int
        let end: Int

        var atEnd: Bool { index == end }

        mutating func expect(_ byte: UInt8) -> Bool {
            guard index < end, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Exactly `count` ASCII digits.
        mutating func digits(_ count: Int) -> Int? {
            guard end - index >= count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }

        /// Three letters, lowercased and packed into one word (`"Nov"` → 0x6E6F76), advancing past
        /// them; nil unless they are three ASCII letters. Names compare as words: a cache hit reads
        /// a `Date` on every answer, and matching names as `String`s cost several thousand
        /// instructions a date.
        mutating func threeLetters() -> UInt32? {
            guard end - index >= 3 else { return nil }
            var code: UInt32 = 0
            for offset in 0..<3 {
                guard let letter = Self.lowercasedLetter(bytes[index + offset]) else { return nil }
                code = code << 8 | UInt32(letter)
            }
            index += 3
            return code
        }

        /// The rest of a long day name (`"day"` of `"Sunday"`), case-insensitively.
        mutating func expectLetters(_ rest: StaticString) -> Bool {
            let count = rest.utf8CodeUnitCount
            guard end - index >= count else { return false }
            let matches = rest.withUTF8Buffer { expected in
                (0..<count).allSatisfy { Self.lowercasedLetter(bytes[index + $0]) == expected[$0] }
            }
            if matches { index += count }
            return matches
        }

        /// Whether a letter comes next.
        var atLetter: Bool { index < end && Self.lowercasedLetter(bytes[index]) != nil }

        private static func lowercasedLetter(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): byte
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte + 32
            default: nil
            }
        }

        /// `HH:MM:SS` as seconds into the day (a leap second included).
        mutating func timeOfDay() -> Int? {
            guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
                  let second = digits(2), hour <= 23, minute <= 59, second <= 60 else { return nil }
            return hour * 3600 + minute * 60 + second
        }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>, now: Date) -> Int64? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        // The longest form, RFC 850 with "Wednesday", is 33 bytes.
        guard end - start <= 33 else { return nil }
        var scanner = Scanner(bytes: bytes, index: start, end: end)
        let space = UInt8(ascii: " ")
        let year: Int, month: Int, day: Int, time: Int
        guard let dayName = scanner.threeLetters().flatMap(weekday(of:)) else { return nil }
        if scanner.atLetter {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            guard scanner.expectLetters(longDayNameEndings[dayName]), scanner.expect(UInt8(ascii: ",")), scanner.expect(space),
                  let parsedDay = scanner.digits(2), scanner.expect(UInt8(ascii: "-")),
                  let parsedMonth = scanner.threeLetters().flatMap(month(of:)), scanner.expect(UInt8(ascii: "-")),
                  let twoDigitYear = scanner.digits(2), scanner.expect(space), let parsedTime = scanner.timeOfDay(),
                  scanner.expect(space), scanner.threeLetters() == gmt, scanner.atEnd else { return nil }
            year = fullYear(twoDigitYear, now: now)
            (month, day, time) = (parsedMonth + 1, parsedDay, parsedTime)
        } else if scanner.expect(UInt8(ascii: ",")) {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard scanner.expect(space), let parsedDay = scanner.digits(2), scanner.expect(space),
                  let parsedMonth = scanner.threeLetters().flatMap(month(of:)), scanner.expect(space),
                  let parsedYear = scanner.digits(4), scanner.expect(space), let parsedTime = scanner.timeOfDay(),
                  scanner.expect(space), scanner.threeLetters() == gmt, scanner.atEnd else { return nil }
            (year, month, day, time) = (parsedYear, parsedMonth + 1, parsedDay, parsedTime)
        } else {
            // asctime: Sun Nov  6 08:49:37 1994
            guard scanner.expect(space), let parsedMonth = scanner.threeLetters().flatMap(month(of:)), scanner.expect(space) else {
                return nil
            }
            let parsedDay: Int?
            if scanner.expect(space) {
                parsedDay = scanner.digits(1)
            } else {
                parsedDay = scanner.digits(2)
            }
            guard let parsedDay, scanner.expect(space), let parsedTime = scanner.timeOfDay(), scanner.expect(space),
                  let parsedYear = scanner.digits(4), scanner.atEnd else { return nil }
            (year, month, day, time) = (parsedYear, parsedMonth + 1, parsedDay, parsedTime)
        }
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        return daysSince1970(year: year, month: month, day: day) * 86_400 + Int64(time)
    }

    /// RFC 9110 §5.6.7: the year ending in `twoDigits` that is at most 50 years after `now`'s year.
    static func fullYear(_ twoDigits: Int, now: Date) -> Int {
        let interval = now.timeIntervalSince1970
        let nowSeconds = interval.isFinite ? Int64(min(max(interval, Double(earliest)), Double(latest))) : 0
        let currentYear = civil(daysSince1970: floorDivide(nowSeconds, 86_400)).year
        let latestYear = currentYear + 50
        return latestYear - Int(floorModulo(Int64(latestYear - twoDigits), 100))
    }

    // MARK: Calendar arithmetic (proleptic Gregorian)

    static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days before the first of each month in a common year.
    private static let daysBeforeMonth = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]

    /// Leap years in 1...year (negative for year < 0, 0 for year 0).
    private static func leapYears(through year: Int64) -> Int64 {
        floorDivide(year, 4) - floorDivide(year, 100) + floorDivide(year, 400)
    }

    static func daysSince1970(year: Int, month: Int, day: Int) -> Int64 {
        let year64 = Int64(year)
        // Days from 1970-01-01 to January 1st of `year`.
        let yearStart = 365 * (year64 - 1970) + leapYears(through: year64 - 1) - leapYears(through: 1969)
        let leapDay: Int64 = month > 2 && isLeap(year) ? 1 : 0
        return yearStart + Int64(daysBeforeMonth[month - 1]) + leapDay + Int64(day - 1)
    }

    static func civil(daysSince1970 days: Int64) -> (year: Int, month: Int, day: Int) {
        // An estimate within a year or two, then corrected.
        var year = Int(1970 + floorDivide(days * 400, 146_097))
        while daysSince1970(year: year, month: 1, day: 1) > days { year -= 1 }
        while daysSince1970(year: year + 1, month: 1, day: 1) <= days { year += 1 }
        var dayOfYear = Int(days - daysSince1970(year: year, month: 1, day: 1))
        var month = 1
        while dayOfYear >= daysIn(month: month, year: year) {
            dayOfYear -= daysIn(month: month, year: year)
            month += 1
        }
        return (year, month, dayOfYear + 1)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    private static func floorModulo(_ value: Int64, _ divisor: Int64) -> Int64 {
        value - floorDivide(value, divisor) * divisor
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
