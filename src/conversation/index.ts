// Conversations: chat messages and their validation, the history a session keeps, and
// sessions with their turns.
export type { ChatMessage, ChatSystemMessage, ChatUserMessage, ChatAssistantMessage, ChatToolMessage, ChatToolCall } from './chat-message.js';
export { snapshotChatMessage, snapshotChatMessages } from './chat-message.js';
export { ConversationHistory } from './conversation-history.js';
export type { HistoryChange, HistoryMark, HistoryObserver } from './conversation-history.js';
export { Scratchpad, Session, openSession } from './session.js';
export type { SessionOptions } from './session.js';
