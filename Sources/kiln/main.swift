import Foundation
import KilnKit

exit(CommandLineTool(arguments: Array(CommandLine.arguments.dropFirst())).run())
