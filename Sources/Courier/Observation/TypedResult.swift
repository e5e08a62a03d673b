/// A request's terminal result before it is handed to a typed observer: a buffered request's
/// value comes as a ``MadeValue`` with its head, a stream's or a download's as it is.
typealias AnyResult = Result<any Sendable, RequestError>

extension Result where Success == any Sendable, Failure == RequestError {
    /// The result as `Result<R, RequestError>`, where `R` is the value's type or a ``Reply`` of
    /// it; otherwise a type mismatch failure naming both types.
    func typed<R: Sendable>(as type: R.Type) -> Result<R, RequestError> {
        switch self {
        case .success(let success):
            let made = success as? MadeValue
            let value = made?.value ?? success
            if let typed = value as? R { return .success(typed) }
            let replyType = R.self as? any ReplyType.Type
            if let replyType, let made, let metrics = made.metrics, let reply = replyType.make(from: made, metrics: metrics) {
                return .success(reply as! R)
            }
            return .failure(.responseTypeMismatch(expected: String(reflecting: replyType?.valueType ?? R.self),
                                                  actual: String(reflecting: Swift.type(of: value))))
        case .failure(let error):
            return .failure(error)
        }
    }
}

/// The type an observer of `R` expects a request to make: `R`, or the value of a ``Reply``.
func expectedValueType<R>(of type: R.Type) -> Any.Type {
    (R.self as? any ReplyType.Type)?.valueType ?? R.self
}

/// Receives one request's result; registered by request ID.
typealias IDObserver = @Sendable (AnyResult) -> Void
