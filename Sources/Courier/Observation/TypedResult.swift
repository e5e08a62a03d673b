/// A request's terminal result before it is handed to a typed observer.
typealias AnyResult = Result<any Sendable, RequestError>

extension Result where Success == any Sendable, Failure == RequestError {
    /// The result as `Result<R, RequestError>`, or a type mismatch failure naming both types.
    func typed<R: Sendable>(as type: R.Type) -> Result<R, RequestError> {
        switch self {
        case .success(let response):
            if let typed = response as? R { return .success(typed) }
            return .failure(.responseTypeMismatch(expected: String(reflecting: R.self),
                                                  actual: String(reflecting: Swift.type(of: response))))
        case .failure(let error):
            return .failure(error)
        }
    }
}

/// Receives one request's result; registered by request ID.
typealias IDObserver = @Sendable (AnyResult) -> Void
