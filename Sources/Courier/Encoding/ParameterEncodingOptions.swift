import Foundation

/// How a ``Serializable`` value is encoded. Each option is documented with its default.
///
/// Give a parameters type its own options with a static property:
/// ```swift
/// struct Search: DefaultQueryString {
///     static let encodingOptions = ParameterEncodingOptions(arrayStyle: .repeatedKey, boolStyle: .numeric)
///     let tags: [String]
///     let exact: Bool
/// }
/// // tags=a&tags=b&exact=1
/// ```
/// The top-level type's options apply to the whole value.
public struct ParameterEncodingOptions: Sendable, Hashable {
    /// How Swift property names become keys. Default: ``KeyStyle/snakeCase``.
    public var keyStyle: KeyStyle
    /// How arrays are written in query strings, forms and multipart fields. Default: ``ArrayStyle/brackets``. JSON ignores it.
    public var arrayStyle: ArrayStyle
    /// How `Bool` is written in query strings, forms and multipart fields. Default: ``BoolStyle/trueFalse``. JSON always writes `true`/`false`.
    public var boolStyle: BoolStyle
    /// How `Date` is written. Default: ``DateStyle/iso8601``.
    public var dateStyle: DateStyle
    /// What a nil property becomes. Default: ``NilStyle/omit``.
    public var nilStyle: NilStyle
    /// How a space is written in query strings and forms. Default: ``SpaceStyle/percent20``.
    public var spaceStyle: SpaceStyle

    /// Snake_case keys, `tags[]` arrays, `true`/`false`, ISO 8601 dates, nil left out, spaces as `%20`.
    public static let `default` = ParameterEncodingOptions()

    /// Creates options; every argument defaults to the value of ``default``.
    public init(
        keyStyle: KeyStyle = .snakeCase,
        arrayStyle: ArrayStyle = .brackets,
        boolStyle: BoolStyle = .trueFalse,
        dateStyle: DateStyle = .iso8601,
        nilStyle: NilStyle = .omit,
        spaceStyle: SpaceStyle = .percent20
    ) {
        self.keyStyle = keyStyle
        self.arrayStyle = arrayStyle
        self.boolStyle = boolStyle
        self.dateStyle = dateStyle
        self.nilStyle = nilStyle
        self.spaceStyle = spaceStyle
    }

    /// How Swift property names become keys. Dictionary keys are data, not names, and are never changed.
    public enum KeyStyle: Sendable, Hashable {
        /// `displayName` → `display_name`, `userID` → `user_id`, `URLString` → `url_string`. The default.
        case snakeCase
        /// `displayName` → `display-name`, split into words like ``snakeCase``.
        case kebabCase
        /// `displayName` → `displayname`.
        case lowercase
        /// `displayName` stays `displayName`.
        case unchanged
    }

    /// How an array `tags = ["a", "b"]` is written outside JSON.
    public enum ArrayStyle: Sendable, Hashable {
        /// `tags[]=a&tags[]=b` (brackets percent-encoded), as Rails, PHP and Werkzeug expect. The default.
        case brackets
        /// `tags=a&tags=b`.
        case repeatedKey
        /// `tags[0]=a&tags[1]=b` (brackets percent-encoded).
        case indexed
        /// `tags=a,b`; a comma inside a value is `%2C`. The elements must be single values, not arrays or structs.
        case commaSeparated
    }

    /// How a `Bool` is written outside JSON.
    public enum BoolStyle: Sendable, Hashable {
        /// `true` and `false`. The default.
        case trueFalse
        /// `1` and `0`.
        case numeric
    }

    /// How a `Date` is written.
    public enum DateStyle: Sendable, Hashable {
        /// ISO 8601 in UTC, `2026-11-22T10:00:00Z`, with milliseconds (`10:00:00.250Z`) only when the date has any. The default.
        case iso8601
        /// Seconds since 1970-01-01 UTC as a number, `1795341600` (with a fraction when there is one).
        case secondsSince1970
        /// Whole milliseconds since 1970-01-01 UTC, `1795341600000`.
        case millisecondsSince1970
    }

    /// What a nil property becomes.
    public enum NilStyle: Sendable, Hashable {
        /// The property is left out. The default.
        case omit
        /// JSON writes `null`. Query strings and forms have no null, so they still leave the property out.
        case null
    }

    /// How a space is written in query strings and forms.
    public enum SpaceStyle: Sendable, Hashable {
        /// `%20`, which every server reads as a space. The default.
        case percent20
        /// `+`, as browsers write forms; a literal `+` is then `%2B` (it always is).
        case plus
    }
}
