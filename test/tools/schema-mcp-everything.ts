/**
 * The inputSchema of every tool of @modelcontextprotocol/server-everything 2026.8.31, as its
 * tools/list answered over stdio (dumped with the MCP SDK client), without the `$schema` it
 * stamped (draft-07): the tests stamp each dialect, as MCP SDK 2.x servers stamp 2020-12.
 */
export const EVERYTHING_TOOLS: readonly { readonly name: string; readonly inputSchema: Record<string, unknown> }[] = [
  {
    "name": "echo",
    "inputSchema": {
      "type": "object",
      "properties": {
        "message": {
          "type": "string",
          "description": "Message to echo"
        }
      },
      "required": [
        "message"
      ]
    }
  },
  {
    "name": "get-annotated-message",
    "inputSchema": {
      "type": "object",
      "properties": {
        "messageType": {
          "type": "string",
          "enum": [
            "error",
            "success",
            "debug"
          ],
          "description": "Type of message to demonstrate different annotation patterns"
        },
        "includeImage": {
          "default": false,
          "description": "Whether to include an example image",
          "type": "boolean"
        }
      },
      "required": [
        "messageType"
      ]
    }
  },
  {
    "name": "get-env",
    "inputSchema": {
      "type": "object",
      "properties": {}
    }
  },
  {
    "name": "get-resource-links",
    "inputSchema": {
      "type": "object",
      "properties": {
        "count": {
          "default": 3,
          "description": "Number of resource links to return (1-10)",
          "type": "number",
          "minimum": 1,
          "maximum": 10
        }
      }
    }
  },
  {
    "name": "get-resource-reference",
    "inputSchema": {
      "type": "object",
      "properties": {
        "resourceType": {
          "default": "Text",
          "type": "string",
          "enum": [
            "Text",
            "Blob"
          ]
        },
        "resourceId": {
          "default": 1,
          "description": "ID of the text resource to fetch",
          "type": "number"
        }
      }
    }
  },
  {
    "name": "get-structured-content",
    "inputSchema": {
      "type": "object",
      "properties": {
        "location": {
          "type": "string",
          "enum": [
            "New York",
            "Chicago",
            "Los Angeles"
          ],
          "description": "Choose city"
        }
      },
      "required": [
        "location"
      ]
    }
  },
  {
    "name": "get-sum",
    "inputSchema": {
      "type": "object",
      "properties": {
        "a": {
          "type": "number",
          "description": "First number"
        },
        "b": {
          "type": "number",
          "description": "Second number"
        }
      },
      "required": [
        "a",
        "b"
      ]
    }
  },
  {
    "name": "get-tiny-image",
    "inputSchema": {
      "type": "object",
      "properties": {}
    }
  },
  {
    "name": "gzip-file-as-resource",
    "inputSchema": {
      "type": "object",
      "properties": {
        "name": {
          "default": "README.md.gz",
          "type": "string",
          "description": "Name of the output file"
        },
        "data": {
          "default": "https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md",
          "type": "string",
          "format": "uri",
          "description": "URL or data URI of the file content to compress"
        },
        "outputType": {
          "default": "resourceLink",
          "description": "How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object.",
          "type": "string",
          "enum": [
            "resourceLink",
            "resource"
          ]
        }
      }
    }
  },
  {
    "name": "toggle-simulated-logging",
    "inputSchema": {
      "type": "object",
      "properties": {}
    }
  },
  {
    "name": "toggle-subscriber-updates",
    "inputSchema": {
      "type": "object",
      "properties": {}
    }
  },
  {
    "name": "trigger-long-running-operation",
    "inputSchema": {
      "type": "object",
      "properties": {
        "duration": {
          "default": 10,
          "description": "Duration of the operation in seconds",
          "type": "number"
        },
        "steps": {
          "default": 5,
          "description": "Number of steps in the operation",
          "type": "number"
        }
      }
    }
  },
  {
    "name": "simulate-research-query",
    "inputSchema": {
      "type": "object",
      "properties": {
        "topic": {
          "type": "string",
          "description": "The research topic to investigate"
        },
        "ambiguous": {
          "default": false,
          "description": "Simulate an ambiguous query that requires clarification (triggers input_required status)",
          "type": "boolean"
        }
      },
      "required": [
        "topic"
      ]
    }
  }
];
