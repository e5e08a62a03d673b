import Observation

/// What observers of a ``PagedResource`` track: a registrar, and one name per property they
/// show; and the names of a ``Resource``'s properties, which ``ResourceCore`` tracks.
///
/// Not generic, on purpose: a key path into a generic class (`\Resource<R>.value`) is built at
/// run time at every use (type metadata, demangling: microseconds each), and a resource names
/// several on every read and every change; these are made once per process. Observation tracks
/// by object and key path, so reading a resource registers with this object, and SwiftUI and
/// `withObservationTracking` see the resource's changes through it.
final class ResourceObservation: Observable, Sendable {
    private let registrar = ObservationRegistrar()

    /// The names properties are observed under: whether a load runs, and everything else a
    /// resource shows, which changes together (a value arrives with its source, its time, its
    /// staleness, the error cleared), and the pages of a list. Each name observed costs a
    /// generic call into the Observation runtime per change; a load that ends changes five
    /// properties and tells two names.
    enum Property: Sendable {
        case value, source, head, updatedAt, error, isStale, isLoading, pages
    }

    // Stand-ins for the key paths, never read for a value.
    private var content: Void { () }
    private var loading: Void { () }
    private var pages: Void { () }

    private static func keyPath(_ property: Property) -> KeyPath<ResourceObservation, Void> {
        switch property {
        case .value, .source, .head, .updatedAt, .error, .isStale: \.content
        case .isLoading: \.loading
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
