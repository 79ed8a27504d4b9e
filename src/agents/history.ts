export * from '../conversation/chat-message.js'; export * from '../conversation/conversation-history.js'; // moved: shim (remove once imports are updated)
