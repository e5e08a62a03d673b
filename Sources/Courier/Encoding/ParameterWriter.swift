import Foundation

/// The output side of the encoder: ``ReflectionEncoder`` walks a value once and calls a writer,
/// which turns the walk into JSON, a percent-encoded form, or multipart fields.
///
/// `begin…` calls that take a key return a mark that the matching `end…` call gets back,
/// so a writer that builds key prefixes needs no stack of its own.
protocol ParameterWriter {
    /// Whether a nil property is written (as `null`) rather than left out.
    var writesNilProperties: Bool { get }

    mutating func beginObject() throws(EncodingFailure)
    mutating func endObject()
    mutating func beginProperty(_ field: FieldLayout) -> Int
    mutating func beginDictionaryEntry(_ key: String) -> Int
    mutating func endEntry(_ mark: Int)

    mutating func beginArray() throws(EncodingFailure)
    mutating func endArray()
    mutating func beginElement(_ index: Int) -> Int

    mutating func writeString(_ value: String) throws(EncodingFailure)
    mutating func writeBool(_ value: Bool) throws(EncodingFailure)
    mutating func writeInteger(_ value: Int64) throws(EncodingFailure)
    mutating func writeInteger(_ value: UInt64) throws(EncodingFailure)
    /// A number already formatted as decimal text (`Double`, `Float`, `Decimal`), known to be finite.
    mutating func writeNumber(_ text: String) throws(EncodingFailure)
    /// NaN or an infinity: JSON rejects them, forms write Swift's `nan`, `inf`, `-inf`.
    mutating func writeNonFiniteNumber(_ value: Double) throws(EncodingFailure)
    mutating func writeNull() throws(EncodingFailure)
}
