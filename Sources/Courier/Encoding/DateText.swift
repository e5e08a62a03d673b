import Foundation

/// ISO 8601 in UTC, `2026-11-22T10:00:00Z`, with `.SSS` milliseconds only when they are not zero.
/// Written by hand because `ISO8601DateFormatter` is slow, not `Sendable` on every platform,
/// and always or never writes the fraction. Returns nil outside years 0000–9999.
func iso8601Text(_ date: Date) -> String? {
    let interval = date.timeIntervalSince1970
    // Years 0000 and 9999 bound what ISO 8601 writes with four digits.
    guard interval.isFinite, interval >= -62_167_219_200, interval < 253_402_300_800 else { return nil }
    var seconds = interval.rounded(.down)
    var milliseconds = ((interval - seconds) * 1000).rounded()
    if milliseconds >= 1000 { seconds += 1; milliseconds = 0 }
    let total = Int64(seconds)
    let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
    let secondOfDay = total - days * 86_400
    let (year, month, day) = civilDate(daysSince1970: days)
    var text = ""
    text.reserveCapacity(24)
    text += padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2)
    text += "T" + padded(secondOfDay / 3600, 2) + ":" + padded(secondOfDay % 3600 / 60, 2) + ":" + padded(secondOfDay % 60, 2)
    if milliseconds > 0 { text += "." + padded(Int64(milliseconds), 3) }
    return text + "Z"
}

private func padded(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

/// Howard Hinnant's `civil_from_days`: proleptic Gregorian date of a day count since 1970-01-01.
private func civilDate(daysSince1970: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = daysSince1970 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
}
