import Foundation

/// A type that says itself how it is encoded as a parameter, instead of being reflected.
///
/// Return any value Courier can encode: a `String`, a number, an array, a dictionary,
/// another struct, or `nil` as `String?.none`. Use it for enums with associated values,
/// types whose stored properties are not what the server expects, or custom date formats:
/// ```swift
/// enum Filter: ParameterConvertible {
///     case all, tag(String)
///     var parameterValue: any Sendable {
///         switch self {
///         case .all: "all"
///         case .tag(let name): ["tag": name]
///         }
///     }
/// }
/// ```
/// It takes precedence over every other rule (reflection, `RawRepresentable`, …) except for
/// Courier's own fast paths for `String`, `Int`, `Bool` and `Double`.
public protocol ParameterConvertible {
    /// The value to encode in place of `self`. Throw to reject a value; the error's description
    /// becomes the reason of ``RequestError/invalidParameters(keyPath:reason:)``.
    var parameterValue: any Sendable { get throws }
}
