import Observation

/// What observers of a ``Resource`` or a ``PagedResource`` track: a registrar, and one name per
/// property they show.
///
/// Not generic, on purpose: a key path into a generic class (`\Resource<R>.value`) is built at
/// run time at every use (type metadata, demangling: microseconds each), and a resource names
/// several on every read and every change; these are made once per process. Observation tracks
/// by object and key path, so reading a resource registers with this object, and SwiftUI and
/// `withObservationTracking` see the resource's changes through it.
final class ResourceObservation: Observable, Sendable {
    private let registrar = ObservationRegistrar()

    /// The names, never read for a value.
    enum Property: Sendable {
        case value, source, head, updatedAt, error, isLoading, isStale, pages
    }

    // Stand-ins for the key paths.
    private var value: Void { () }
    private var source: Void { () }
    private var head: Void { () }
    private var updatedAt: Void { () }
    private var error: Void { () }
    private var isLoading: Void { () }
    private var isStale: Void { () }
    private var pages: Void { () }

    private static func keyPath(_ property: Property) -> KeyPath<ResourceObservation, Void> {
        switch property {
        case .value: \.value
        case .source: \.source
        case .head: \.head
        case .updatedAt: \.updatedAt
        case .error: \.error
        case .isLoading: \.isLoading
        case .isStale: \.isStale
        case .pages: \.pages
        }
    }

    func access(_ property: Property) {
        registrar.access(self, keyPath: Self.keyPath(property))
    }

    func willSet(_ property: Property) {
        registrar.willSet(self, keyPath: Self.keyPath(property))
    }

    func didSet(_ property: Property) {
        registrar.didSet(self, keyPath: Self.keyPath(property))
    }
}
