import Foundation

extension ParameterEncodingOptions.KeyStyle {
    /// The key for a Swift property name. Called once per property per type (layouts are cached).
    func key(for name: String) -> String {
        switch self {
        case .unchanged: name
        case .lowercase: name.lowercased()
        case .snakeCase: Self.splitWords(name, separator: "_")
        case .kebabCase: Self.splitWords(name, separator: "-")
        }
    }

    /// Splits camelCase into lowercased words. A run of capitals is one word (an acronym)
    /// ending before a capital that starts a lowercase word: `myURLProperty` → `my_url_property`.
    /// Leading and existing underscores are kept, as `JSONEncoder.convertToSnakeCase` does.
    private static func splitWords(_ name: String, separator: Character) -> String {
        let characters = Array(name)
        var result = ""
        result.reserveCapacity(characters.count + 4)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLowercase = index + 1 < characters.count && characters[index + 1].isLowercase
                let startsWord = previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLowercase)
                if startsWord, previous != "_", previous != "-" {
                    result.append(separator)
                }
            }
            result += character.lowercased()
        }
        return result
    }
}
