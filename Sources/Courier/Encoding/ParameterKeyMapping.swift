import Foundation

/// A type that renames or leaves out some of its stored properties when it is encoded.
///
/// ```swift
/// struct Account: JSONBodyData, ParameterKeyMapping {
///     let id: Int
///     let displayName: String
///     let passwordHash: String
///     static var parameterKeys: [String: ParameterKey] {
///         ["displayName": "name", "passwordHash": .excluded]
///     }
/// }
/// // {"id":1,"name":"Ada"}
/// ```
/// Keys of ``parameterKeys`` are Swift property names as written (`displayName`, and `name`
/// for a property wrapper `@Wrapper var name`). Properties not listed use the
/// ``ParameterEncodingOptions/keyStyle``; renamed keys are used exactly as given.
/// The mapping is read once per type and cached, so it must not change at run time.
/// Any type in the value's tree may adopt it, not only the top-level one.
public protocol ParameterKeyMapping {
    /// Renamed or excluded properties, by Swift property name. Naming a property that does
    /// not exist throws ``RequestError/invalidParameters(keyPath:reason:)``, to catch typos.
    static var parameterKeys: [String: ParameterKey] { get }
}

/// What becomes of one stored property in ``ParameterKeyMapping/parameterKeys``.
public enum ParameterKey: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The property is encoded under this key, as it is (no key style applies).
    case renamed(String)
    /// The property is not encoded.
    case excluded

    /// A string literal renames the property: `"name"` is `.renamed("name")`.
    public init(stringLiteral value: String) {
        self = .renamed(value)
    }
}
